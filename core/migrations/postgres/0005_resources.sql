-- The operator's resources: crop presets, alias limits and render quotas,
-- from Kubernetes custom resources (name `k8s/{namespace}/{name}`) or from
-- the TOML configuration (name `config/...`). Specs are JSON.
CREATE TABLE op_resources (
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    spec       TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (kind, name)
);
