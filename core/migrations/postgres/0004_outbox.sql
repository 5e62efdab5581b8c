-- Render work committed but not yet handed to the queue (the transactional
-- outbox). One row per image: a second request before the relay has sent
-- the first only renews the ticket, which names the queue message (so the
-- queue can drop a row sent twice) and keeps a newer request from being
-- deleted by the send of an older one.
CREATE TABLE render_outbox (
    image_id  TEXT PRIMARY KEY REFERENCES images(id) ON DELETE CASCADE,
    ticket    TEXT NOT NULL,
    queued_at BIGINT NOT NULL
);
CREATE INDEX render_outbox_queued ON render_outbox(queued_at);
