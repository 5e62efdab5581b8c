-- Rollbacks: which migrations a binary that predates them may run against.
-- From this migration on, every migration records its own version here
-- with `older_binaries_run` 1 when it only adds (a nullable or defaulted
-- column, a table, an index: what the previous release's statements
-- still work against), or 0 when it changes what an older binary reads or
-- writes (a drop, a rename, a new NOT NULL without default). A binary
-- started on a database with migrations it does not know runs when all
-- of them say 1 and refuses, naming the first that does not, otherwise
-- (`db::sql::schema`). Within a minor version migrations only add.
CREATE TABLE schema_versions (
    version            BIGINT PRIMARY KEY,
    older_binaries_run INTEGER NOT NULL
);
INSERT INTO schema_versions (version, older_binaries_run) VALUES (20, 1);
