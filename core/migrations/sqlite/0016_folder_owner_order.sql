-- A folder's page as its owner lists it (image.list with album_id) filters
-- on the folder and the owner. With only the folder's index and the
-- owner's, the plan PostgreSQL keeps for that statement (made from average
-- statistics) walks the owner's index and filters by folder wherever
-- owners have about as many folders as photos per folder: 58 ms for a
-- one-photo folder of an owner with 50,000 photos. With both in one
-- index the walk is the folder's alone (0.4 ms).
CREATE INDEX images_album_owner_order ON images(album_id, owner_id, sort_at DESC, id DESC);
