-- Work handed to embedded mode's in-process queue stays in the outbox
-- until its job is done (`sent_at` set meanwhile): that queue dies with
-- the process, so each start hands out again every row it finds sent.
-- Before, a sent row was deleted, and a job lost with the process was
-- found again only by scans (photos `processing`, renders owed), which a
-- preset's re-render backlog is not. NATS keeps what it acknowledges, so
-- for it a row still goes as soon as it is sent. The relay reads only
-- unsent rows, in their order, through this index.
ALTER TABLE render_outbox ADD COLUMN sent_at BIGINT;
DROP INDEX render_outbox_queued;
CREATE INDEX render_outbox_waiting ON render_outbox(queued_at, image_id) WHERE sent_at IS NULL;
