-- The generation of a photo's folder membership: grows with every move,
-- so a download link minted in one stay goes stale after the photo moves
-- away, even if it comes back (issue 16).
ALTER TABLE images ADD COLUMN membership BIGINT NOT NULL DEFAULT 0;
