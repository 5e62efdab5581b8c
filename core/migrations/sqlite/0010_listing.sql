-- image.list of one folder walks this index in its order (issue 21).
DROP INDEX images_album;
CREATE INDEX images_album_order ON images(album_id, sort_at DESC, id DESC);
