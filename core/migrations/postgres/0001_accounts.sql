-- Accounts, sessions, refresh tokens, personal access tokens, login throttle.
-- Ids are UUID text, times are Unix milliseconds, booleans 0/1: the same
-- statements then run unchanged on SQLite and PostgreSQL.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    is_admin      BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL
);

CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

CREATE TABLE personal_access_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    expires_at   BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens(user_id);

CREATE TABLE login_failures (
    email           TEXT NOT NULL,
    client          TEXT NOT NULL,
    failures        BIGINT NOT NULL,
    last_failure_at BIGINT NOT NULL,
    PRIMARY KEY (email, client)
);
