-- Folders (the default one per user for now), images and their renders.
CREATE TABLE albums (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_default  BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    deleted_at  BIGINT
);
CREATE INDEX albums_owner ON albums(owner_id);
CREATE UNIQUE INDEX albums_one_default ON albums(owner_id) WHERE is_default = 1;

CREATE TABLE images (
    id              TEXT PRIMARY KEY,
    owner_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    album_id        TEXT NOT NULL REFERENCES albums(id),
    title           TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    format          TEXT NOT NULL,
    width           BIGINT NOT NULL,
    height          BIGINT NOT NULL,
    size_bytes      BIGINT NOT NULL,
    original_key    TEXT NOT NULL,
    exif            TEXT NOT NULL,
    exif_visibility TEXT NOT NULL,
    visibility      TEXT,
    taken_at        BIGINT,
    sort_at         BIGINT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX images_owner_order ON images(owner_id, sort_at DESC, id DESC);
CREATE INDEX images_album ON images(album_id);
CREATE INDEX images_status ON images(status);

-- One row per render an image should have. `version` grows when the spec
-- changes; `produced_version` says which version the stored bytes are.
CREATE TABLE renders (
    image_id         TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
    code             TEXT NOT NULL,
    spec             TEXT NOT NULL,
    version          BIGINT NOT NULL,
    produced_version BIGINT,
    width            BIGINT,
    height           BIGINT,
    size_bytes       BIGINT,
    blob_key         TEXT,
    PRIMARY KEY (image_id, code)
);

CREATE TABLE custom_crops (
    image_id   TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
    code       TEXT NOT NULL,
    spec       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (image_id, code)
);
