-- A folder's stats (sharingStatsDTO's figures: db::FolderRepo::folder_counts)
-- kept by the database as its photos arrive, change, move and go, one row
-- per folder and class, so album.preview reads a handful of rows instead
-- of grouping every photo of the folder (issue 21). The class is the
-- photo's own (domain::image::Image::eligibility); a takedown carried from
-- another folder and the folder's own takedown are applied when read.
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
    CASE WHEN taken_down_at IS NOT NULL THEN 'taken_down'
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

-- A photo's row counted in (sign 1) or out (-1) of its folder's stats.
CREATE FUNCTION folder_stats_count(photo images, sign BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO folder_stats AS s VALUES (photo.album_id,
        CASE WHEN photo.taken_down_at IS NOT NULL THEN 'taken_down'
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
CREATE FUNCTION folder_stats_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
CREATE TRIGGER folder_stats_update AFTER UPDATE OF album_id, status, taken_down_at, width, height, has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned
    ON images FOR EACH ROW EXECUTE FUNCTION folder_stats_keep();

-- folder_counts read this index; nothing does now.
DROP INDEX images_album_stats;
