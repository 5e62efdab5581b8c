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

-- Folder pages walk these in each visitor order (taken_* uses
-- images_album_order).
CREATE INDEX images_album_uploaded ON images(album_id, created_at DESC, id DESC);
CREATE INDEX images_album_manual ON images(album_id, position, sort_at DESC, id DESC);

-- The spec of each preset whose re-render backlog is already queued (in
-- the outbox), so a start with unchanged presets scans nothing.
CREATE TABLE preset_backlogs (
    code TEXT PRIMARY KEY,
    spec TEXT NOT NULL
);
