-- Listing independent of collection size (issue 21).

-- A folder's photo count, kept by the database as photos arrive, move
-- and go, so album.list never counts.
ALTER TABLE albums ADD COLUMN image_count BIGINT NOT NULL DEFAULT 0;
UPDATE albums SET image_count = (SELECT COUNT(*) FROM images i WHERE i.album_id = albums.id);
CREATE FUNCTION images_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE albums SET image_count = image_count - 1 WHERE id = OLD.album_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE albums SET image_count = image_count + 1 WHERE id = NEW.album_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER images_count_insert_delete AFTER INSERT OR DELETE ON images
    FOR EACH ROW EXECUTE FUNCTION images_count();
CREATE TRIGGER images_count_move AFTER UPDATE OF album_id ON images
    FOR EACH ROW WHEN (OLD.album_id IS DISTINCT FROM NEW.album_id)
    EXECUTE FUNCTION images_count();

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
    has_gps = ((exif::jsonb ->> 'gps') IS NOT NULL)::int,
    has_date = ((exif::jsonb ->> 'taken_at') IS NOT NULL)::int,
    has_camera = ((exif::jsonb ->> 'camera_make') IS NOT NULL
        OR (exif::jsonb ->> 'camera_model') IS NOT NULL)::int,
    show_gps = COALESCE((exif_visibility::jsonb ->> 'gps')::boolean, false)::int,
    show_date = COALESCE((exif_visibility::jsonb ->> 'datetime')::boolean, true)::int,
    show_camera = COALESCE((exif_visibility::jsonb ->> 'camera')::boolean, true)::int,
    captioned = (btrim(title) <> '' OR btrim(description) <> '')::int;

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
