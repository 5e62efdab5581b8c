-- How many times embedded mode's in-process queue has started this row's
-- job, in any process. That queue dies with its process, so a job that
-- takes the process down with it (an OOM kill, an abort in a C library)
-- was tried again at every start, its attempts counted afresh; counted
-- here, it ends `failed` after the fifth start, as NATS's max-deliveries
-- ends it in cluster mode. A renewed row (a new ticket) starts again at 0.
ALTER TABLE render_outbox ADD COLUMN started INTEGER NOT NULL DEFAULT 0;
