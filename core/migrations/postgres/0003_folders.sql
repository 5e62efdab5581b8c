-- Folders, their crop rules, publication, links, aliases and moderation.
ALTER TABLE albums ADD COLUMN mode TEXT NOT NULL DEFAULT 'private';
ALTER TABLE albums ADD COLUMN last_published_mode TEXT;
ALTER TABLE albums ADD COLUMN published_at BIGINT;
ALTER TABLE albums ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';
ALTER TABLE albums ADD COLUMN cover_image_id TEXT;
ALTER TABLE albums ADD COLUMN taken_down_at BIGINT;
ALTER TABLE albums ADD COLUMN takedown_reason TEXT;

ALTER TABLE images ADD COLUMN position BIGINT;
ALTER TABLE images ADD COLUMN taken_down_at BIGINT;
ALTER TABLE images ADD COLUMN takedown_reason TEXT;

-- A folder rule: a render every photo of the folder gets (or a preset
-- replaced for them when the code is a preset's).
CREATE TABLE album_crops (
    album_id   TEXT NOT NULL REFERENCES albums(id),
    code       TEXT NOT NULL,
    spec       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (album_id, code)
);

-- Bearer links of unlisted folders. Only a hash of the token is stored;
-- the token itself is an HMAC of `nonce` under the signing key, so the
-- owner can be shown it again while the database alone cannot.
CREATE TABLE share_links (
    token_hash TEXT PRIMARY KEY,
    album_id   TEXT NOT NULL REFERENCES albums(id),
    nonce      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);
CREATE UNIQUE INDEX share_links_one_live ON share_links(album_id) WHERE retired_at IS NULL;

-- Aliases are global: the primary key decides every race for a name.
CREATE TABLE aliases (
    alias      TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    album_id   TEXT NOT NULL REFERENCES albums(id),
    state      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);
CREATE INDEX aliases_album ON aliases(album_id);
CREATE INDEX aliases_owner ON aliases(owner_id, state);

-- Every publication change, committed with the change itself.
CREATE TABLE publication_history (
    id          BIGSERIAL PRIMARY KEY,
    album_id    TEXT NOT NULL REFERENCES albums(id),
    mode        TEXT NOT NULL,
    image_count BIGINT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX publication_history_album ON publication_history(album_id);

-- Re-render jobs started by folder changes; `job_id` of jobResult.
CREATE TABLE render_jobs (
    id          BIGSERIAL PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    album_id    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    image_count BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);
