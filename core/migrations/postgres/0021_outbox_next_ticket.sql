-- A photo asked for again while its render job runs: the row stays sent
-- (its job still counts against the owner's share of the render slots,
-- and no second job of the photo runs beside it) and the new request
-- waits here; the worker's answer then makes the row waiting under it.
ALTER TABLE render_outbox ADD COLUMN next_ticket TEXT;
INSERT INTO schema_versions (version, older_binaries_run) VALUES (21, 1);
