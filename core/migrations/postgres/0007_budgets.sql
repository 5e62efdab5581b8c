-- Why a photo's renders failed (issue 17: a job over the render memory
-- budget, an undecodable original), shown to its owner while it is failed.
CREATE TABLE image_failures (
    image_id   TEXT PRIMARY KEY REFERENCES images(id) ON DELETE CASCADE,
    reason     TEXT NOT NULL,
    failed_at  BIGINT NOT NULL
);
