-- The renders a job still owes (never made, or made for a spec that has
-- changed since) under their photo's id; every other render under NULL.
-- At start `recover` reads the owed ones alone (a job lost with the
-- in-process queue, or whose commits a power loss undid, runs again)
-- instead of every render. An expression, not a partial index: PostgreSQL
-- keeps statistics on it (the share of NULLs), so it knows how few rows
-- the condition leaves; with a partial index it guessed 99 % of the table
-- and read all of it.
CREATE INDEX renders_owed ON renders
    ((CASE WHEN produced_version IS NULL OR produced_version <> version THEN image_id END));

-- The photos a folder job still owes its renders, for the same start.
CREATE INDEX render_job_items_queued ON render_job_items(image_id) WHERE state = 'queued';
