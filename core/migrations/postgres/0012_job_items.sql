-- Which photos a re-render job covers and how each ended, so `job.get`
-- can report progress. A photo deleted mid-job takes its row with it and
-- counts as done (nothing is left to render).
CREATE TABLE render_job_items (
    job_id   BIGINT NOT NULL REFERENCES render_jobs(id) ON DELETE CASCADE,
    image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
    state    TEXT NOT NULL DEFAULT 'queued',
    PRIMARY KEY (job_id, image_id)
);
CREATE INDEX render_job_items_image ON render_job_items(image_id, state);
