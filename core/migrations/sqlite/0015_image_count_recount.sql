-- Migration 0013's count on PostgreSQL could miss a photo written during a
-- rolling deploy (see postgres/0015). SQLite has one writer at a time and
-- one process, so nothing was missed here; the same recount keeps the two
-- schemas' histories alike.
UPDATE albums SET image_count = (SELECT COUNT(*) FROM images i WHERE i.album_id = albums.id)
WHERE image_count <> (SELECT COUNT(*) FROM images i WHERE i.album_id = albums.id);
