-- A folder's stats (sharingStatsDTO's figures: db::FolderRepo::folder_counts)
-- kept by the database as its photos arrive, change, move and go, one row
-- per folder and class, so album.preview reads a handful of rows instead
-- of grouping every photo of the folder (issue 21). The class is the
-- photo's own (domain::image::Image::eligibility), a takedown carried from
-- another folder included; the folder's own takedown applies when read.

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

CREATE TRIGGER takedown_covers_carried AFTER INSERT ON takedown_covers BEGIN
    UPDATE images SET carried = carried + 1 WHERE id = NEW.image_id;
END;
CREATE TRIGGER takedown_covers_lifted AFTER DELETE ON takedown_covers BEGIN
    UPDATE images SET carried = carried - 1 WHERE id = OLD.image_id;
END;

-- A photo's row counted in (sign 1) or out (-1) of its folder's stats: the
-- triggers below insert into this view, and its own trigger adds the
-- photo to its class's row.
CREATE VIEW folder_stats_changes (sign, album_id, status, taken_down_at, carried, width, height, has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned) AS
    SELECT 0, album_id, status, taken_down_at, carried, width, height, has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned FROM images WHERE 0;
CREATE TRIGGER folder_stats_change INSTEAD OF INSERT ON folder_stats_changes BEGIN
    INSERT INTO folder_stats VALUES (NEW.album_id,
        CASE WHEN NEW.taken_down_at IS NOT NULL OR NEW.carried > 0 THEN 'taken_down'
        WHEN NEW.status <> 'ready' THEN NEW.status
        WHEN NEW.width < 200 AND NEW.height < 200 THEN 'too_small'
        ELSE 'visible' END,
        NEW.sign,
        NEW.sign * NEW.has_gps * NEW.show_gps,
        NEW.sign * NEW.has_gps * (1 - NEW.show_gps),
        NEW.sign * NEW.has_date * NEW.show_date,
        NEW.sign * NEW.has_date * (1 - NEW.show_date),
        NEW.sign * NEW.has_camera * NEW.show_camera,
        NEW.sign * NEW.has_camera * (1 - NEW.show_camera),
        NEW.sign * NEW.captioned)
    ON CONFLICT (album_id, class) DO UPDATE SET n = n + excluded.n,
        gps_on = gps_on + excluded.gps_on,
        gps_off = gps_off + excluded.gps_off,
        date_on = date_on + excluded.date_on,
        date_off = date_off + excluded.date_off,
        camera_on = camera_on + excluded.camera_on,
        camera_off = camera_off + excluded.camera_off,
        captioned = captioned + excluded.captioned;
END;
CREATE TRIGGER folder_stats_insert AFTER INSERT ON images BEGIN
    INSERT INTO folder_stats_changes SELECT 1, NEW.album_id, NEW.status, NEW.taken_down_at, NEW.carried, NEW.width, NEW.height, NEW.has_gps, NEW.has_date, NEW.has_camera, NEW.show_gps, NEW.show_date, NEW.show_camera, NEW.captioned;
END;
CREATE TRIGGER folder_stats_delete AFTER DELETE ON images BEGIN
    INSERT INTO folder_stats_changes SELECT -1, OLD.album_id, OLD.status, OLD.taken_down_at, OLD.carried, OLD.width, OLD.height, OLD.has_gps, OLD.has_date, OLD.has_camera, OLD.show_gps, OLD.show_date, OLD.show_camera, OLD.captioned;
END;
CREATE TRIGGER folder_stats_update AFTER UPDATE OF album_id, status, taken_down_at, carried, width, height, has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned
ON images WHEN OLD.album_id IS NOT NEW.album_id
    OR OLD.status IS NOT NEW.status
    OR OLD.taken_down_at IS NOT NEW.taken_down_at
    OR OLD.carried IS NOT NEW.carried
    OR OLD.width IS NOT NEW.width
    OR OLD.height IS NOT NEW.height
    OR OLD.has_gps IS NOT NEW.has_gps
    OR OLD.has_date IS NOT NEW.has_date
    OR OLD.has_camera IS NOT NEW.has_camera
    OR OLD.show_gps IS NOT NEW.show_gps
    OR OLD.show_date IS NOT NEW.show_date
    OR OLD.show_camera IS NOT NEW.show_camera
    OR OLD.captioned IS NOT NEW.captioned
BEGIN
    INSERT INTO folder_stats_changes SELECT -1, OLD.album_id, OLD.status, OLD.taken_down_at, OLD.carried, OLD.width, OLD.height, OLD.has_gps, OLD.has_date, OLD.has_camera, OLD.show_gps, OLD.show_date, OLD.show_camera, OLD.captioned;
    INSERT INTO folder_stats_changes SELECT 1, NEW.album_id, NEW.status, NEW.taken_down_at, NEW.carried, NEW.width, NEW.height, NEW.has_gps, NEW.has_date, NEW.has_camera, NEW.show_gps, NEW.show_date, NEW.show_camera, NEW.captioned;
END;

-- folder_counts read this index; nothing does now.
DROP INDEX images_album_stats;
