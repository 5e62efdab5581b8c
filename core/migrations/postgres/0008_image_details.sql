-- What the render job and the owner add to a photo beyond its upload
-- (issue 19), kept beside `images` so that table's rows stay as they are.
-- JSON text in each column; a missing row means nothing recorded yet.
CREATE TABLE image_details (
    image_id    TEXT PRIMARY KEY REFERENCES images(id) ON DELETE CASCADE,
    -- The owner's focal point, {"x": 0..1, "y": 0..1}.
    focus       TEXT,
    -- ThumbHash, base64.
    placeholder TEXT,
    -- Where a motion photo's clip lies in the original, {"offset", "len"}.
    motion      TEXT,
    -- The most salient point, for covers shown with cover_focus smart.
    salient     TEXT
);
