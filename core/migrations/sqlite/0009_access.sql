-- Access rules (issue 16).
-- A folder's takedown is carried onto the photos it held when it started,
-- so they stay unreachable to visitors wherever the owner moves them next
-- (or when the folder is deleted), until admin.restore of that folder.
CREATE TABLE takedown_covers (
    image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
    album_id TEXT NOT NULL,
    at       BIGINT NOT NULL,
    reason   TEXT,
    PRIMARY KEY (image_id, album_id)
);
CREATE INDEX takedown_covers_album ON takedown_covers(album_id);

-- The last version of a render whose row was deleted (a custom crop or a
-- folder rule removed), so a render of the same code added later never
-- reuses a version, a storage key or a cached URL.
CREATE TABLE render_versions_retired (
    image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
    code     TEXT NOT NULL,
    version  BIGINT NOT NULL,
    PRIMARY KEY (image_id, code)
);
