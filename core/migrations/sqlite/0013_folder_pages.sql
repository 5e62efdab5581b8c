-- Listing independent of collection size (issue 21).

-- A folder's photo count, kept by the database as photos arrive, move
-- and go, so album.list never counts.
ALTER TABLE albums ADD COLUMN image_count BIGINT NOT NULL DEFAULT 0;
UPDATE albums SET image_count = (SELECT COUNT(*) FROM images i WHERE i.album_id = albums.id);
CREATE TRIGGER images_count_insert AFTER INSERT ON images BEGIN
    UPDATE albums SET image_count = image_count + 1 WHERE id = NEW.album_id;
END;
CREATE TRIGGER images_count_delete AFTER DELETE ON images BEGIN
    UPDATE albums SET image_count = image_count - 1 WHERE id = OLD.album_id;
END;
CREATE TRIGGER images_count_move AFTER UPDATE OF album_id ON images
WHEN OLD.album_id <> NEW.album_id BEGIN
    UPDATE albums SET image_count = image_count - 1 WHERE id = OLD.album_id;
    UPDATE albums SET image_count = image_count + 1 WHERE id = NEW.album_id;
END;

-- What a folder's stats count, as columns (written with the EXIF and
-- its visibility, the title and the description), so the stats are one
-- aggregate over the folder's index rather than every photo's JSON.
ALTER TABLE images ADD COLUMN has_gps BIGINT NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN has_date BIGINT NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN has_camera BIGINT NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN show_gps BIGINT NOT NULL DEFAULT 0;
ALTER TABLE images ADD COLUMN show_date BIGINT NOT NULL DEFAULT 1;
ALTER TABLE images ADD COLUMN show_camera BIGINT NOT NULL DEFAULT 1;
ALTER TABLE images ADD COLUMN captioned BIGINT NOT NULL DEFAULT 0;
UPDATE images SET
    has_gps = json_extract(exif, '$.gps') IS NOT NULL,
    has_date = json_extract(exif, '$.taken_at') IS NOT NULL,
    has_camera = json_extract(exif, '$.camera_make') IS NOT NULL
        OR json_extract(exif, '$.camera_model') IS NOT NULL,
    show_gps = COALESCE(json_extract(exif_visibility, '$.gps'), 0),
    show_date = COALESCE(json_extract(exif_visibility, '$.datetime'), 1),
    show_camera = COALESCE(json_extract(exif_visibility, '$.camera'), 1),
    captioned = trim(title) <> '' OR trim(description) <> '';

-- Folder pages walk these, one per visitor order. They hold only the
-- photos a visitor may see but for takedowns carried from elsewhere (the
-- condition is db::sql::folders::SHOWN, word for word), so counting a
-- folder's photos before one of them reads no table row (the
-- condition's columns are in the index for that: SQLite reads a partial
-- index's condition from the row otherwise). The last one
-- answers a folder's stats without the table.
CREATE INDEX images_album_shown_taken ON images(album_id, sort_at DESC, id DESC,
    status, taken_down_at, width, height)
    WHERE status = 'ready' AND taken_down_at IS NULL AND (width >= 200 OR height >= 200);
CREATE INDEX images_album_shown_uploaded ON images(album_id, created_at DESC, id DESC,
    status, taken_down_at, width, height)
    WHERE status = 'ready' AND taken_down_at IS NULL AND (width >= 200 OR height >= 200);
CREATE INDEX images_album_shown_manual ON images(album_id, position, sort_at DESC, id DESC,
    status, taken_down_at, width, height)
    WHERE status = 'ready' AND taken_down_at IS NULL AND (width >= 200 OR height >= 200);
CREATE INDEX images_album_stats ON images(album_id, status, taken_down_at, width, height,
    has_gps, show_gps, has_date, show_date, has_camera, show_camera, captioned, id);

-- The spec of each preset whose re-render backlog is already queued (in
-- the outbox), so a start with unchanged presets scans nothing.
CREATE TABLE preset_backlogs (
    code TEXT PRIMARY KEY,
    spec TEXT NOT NULL
);
