-- A folder's stats (sharingStatsDTO's figures: db::FolderRepo::folder_counts)
-- kept by the database as its photos arrive, change, move and go, one row
-- per folder and class, so album.preview reads a handful of rows instead
-- of grouping every photo of the folder (issue 21). The class is the
-- photo's own (domain::image::Image::eligibility), a takedown carried from
-- another folder included; the folder's own takedown applies when read.

-- Writers of older versions still running wait until this commits, so
-- no photo they write is missed by the counts below.
LOCK TABLE images, takedown_covers IN SHARE ROW EXCLUSIVE MODE;

-- How many folder takedowns a photo carries (its takedown_covers rows),
-- kept as covers come and go. Only the stats read it: what visitors may
-- see is still decided from takedown_covers itself.
ALTER TABLE images ADD COLUMN carried BIGINT NOT NULL DEFAULT 0;
UPDATE images SET carried = (SELECT COUNT(*) FROM takedown_covers c WHERE c.image_id = images.id)
WHERE id IN (SELECT image_id FROM takedown_covers);

CREATE TABLE folder_stats (
    album_id   TEXT NOT NULL REFERENCES albums(id) ON DELETE CASCADE,
    class      TEXT NOT NULL,
    n          BIGINT NOT NULL,
    gps_on     BIGINT NOT NULL,
    gps_off    BIGINT NOT NULL,
    date_on    BIGINT NOT NULL,
    date_off   BIGINT NOT NULL,
    camera_on  BIGINT NOT NULL,
    camera_off BIGINT NOT NULL,
    captioned  BIGINT NOT NULL,
    PRIMARY KEY (album_id, class)
);
INSERT INTO folder_stats
SELECT album_id,
    CASE WHEN taken_down_at IS NOT NULL OR carried > 0 THEN 'taken_down'
        WHEN status <> 'ready' THEN status
        WHEN width < 200 AND height < 200 THEN 'too_small'
        ELSE 'visible' END,
    COUNT(*), CAST(SUM(has_gps * show_gps) AS BIGINT),
    CAST(SUM(has_gps * (1 - show_gps)) AS BIGINT),
    CAST(SUM(has_date * show_date) AS BIGINT),
    CAST(SUM(has_date * (1 - show_date)) AS BIGINT),
    CAST(SUM(has_camera * show_camera) AS BIGINT),
    CAST(SUM(has_camera * (1 - show_camera)) AS BIGINT),
    CAST(SUM(captioned) AS BIGINT)
FROM images GROUP BY 1, 2;

CREATE FUNCTION takedown_covers_carried() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE images SET carried = carried + 1 WHERE id = NEW.image_id;
    ELSE
        UPDATE images SET carried = carried - 1 WHERE id = OLD.image_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER takedown_covers_carried AFTER INSERT OR DELETE ON takedown_covers
    FOR EACH ROW EXECUTE FUNCTION takedown_covers_carried();

-- A photo's row counted in (sign 1) or out (-1) of its folder's stats.
CREATE FUNCTION folder_stats_count(photo images, sign BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO folder_stats AS s VALUES (photo.album_id,
        CASE WHEN photo.taken_down_at IS NOT NULL OR photo.carried > 0 THEN 'taken_down'
        WHEN photo.status <> 'ready' THEN photo.status
        WHEN photo.width < 200 AND photo.height < 200 THEN 'too_small'
        ELSE 'visible' END,
        sign,
        sign * photo.has_gps * photo.show_gps,
        sign * photo.has_gps * (1 - photo.show_gps),
        sign * photo.has_date * photo.show_date,
        sign * photo.has_date * (1 - photo.show_date),
        sign * photo.has_camera * photo.show_camera,
        sign * photo.has_camera * (1 - photo.show_camera),
        sign * photo.captioned)
    ON CONFLICT (album_id, class) DO UPDATE SET n = s.n + excluded.n,
        gps_on = s.gps_on + excluded.gps_on,
        gps_off = s.gps_off + excluded.gps_off,
        date_on = s.date_on + excluded.date_on,
        date_off = s.date_off + excluded.date_off,
        camera_on = s.camera_on + excluded.camera_on,
        camera_off = s.camera_off + excluded.camera_off,
        captioned = s.captioned + excluded.captioned;
$$;
-- The folders' rows in albums are locked first, in id order, so writers
-- of one folder's photos queue there before they touch its stats rows: a
-- transaction moving photos into a folder and another finishing a photo
-- there locked two of its stats rows in opposite orders and deadlocked.
CREATE FUNCTION folder_stats_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM albums WHERE id IN (OLD.album_id, NEW.album_id)
        ORDER BY id FOR NO KEY UPDATE;
    IF TG_OP <> 'INSERT' THEN
        PERFORM folder_stats_count(OLD, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM folder_stats_count(NEW, 1);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER folder_stats_insert_delete AFTER INSERT OR DELETE ON images
    FOR EACH ROW EXECUTE FUNCTION folder_stats_keep();
CREATE TRIGGER folder_stats_update AFTER UPDATE OF album_id, status, taken_down_at, carried, width, height, has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned
    ON images FOR EACH ROW
    WHEN ((OLD.album_id, OLD.status, OLD.taken_down_at, OLD.carried, OLD.width, OLD.height, OLD.has_gps, OLD.has_date, OLD.has_camera, OLD.show_gps, OLD.show_date, OLD.show_camera, OLD.captioned) IS DISTINCT FROM (NEW.album_id, NEW.status, NEW.taken_down_at, NEW.carried, NEW.width, NEW.height, NEW.has_gps, NEW.has_date, NEW.has_camera, NEW.show_gps, NEW.show_date, NEW.show_camera, NEW.captioned))
    EXECUTE FUNCTION folder_stats_keep();

-- folder_counts read this index; nothing does now.
DROP INDEX images_album_stats;
