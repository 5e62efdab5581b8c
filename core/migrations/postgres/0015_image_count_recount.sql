-- Migration 0013 counted each folder's photos before its trigger existed,
-- in the same transaction but without holding writers off: a photo that
-- a replica of the version before wrote in between (a rolling deploy) was
-- never counted, and album.list would show it one short for good. Counted
-- again here, with writers waiting until this commits (as 0014 does), so
-- any such drift is corrected once and cannot recur.
-- Writers queue behind the table lock while it waits, so it waits at most
-- 5 s: past that the migration fails, and the new replica retries it as it
-- restarts while the older replicas carry on. (It can also deadlock with
-- an older replica's folder deletion or takedown of a folder whose count
-- drifted; either side may then be the one aborted.)
SET LOCAL lock_timeout = '5s';
LOCK TABLE images IN SHARE ROW EXCLUSIVE MODE;
UPDATE albums SET image_count = c.n
FROM (SELECT a.id, COUNT(i.id) AS n FROM albums a LEFT JOIN images i ON i.album_id = a.id
      GROUP BY a.id) AS c
WHERE c.id = albums.id AND albums.image_count <> c.n;
