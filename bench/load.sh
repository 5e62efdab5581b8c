#!/usr/bin/env bash
# Load and soak against a running Lightbox, embedded (SQLite, local disk,
# in-process workers) and cluster (PostgreSQL, S3 via moto, NATS, one
# lightbox-worker): readers call image.list and album.preview and fetch
# renders over LOAD_CONNECTIONS connections while photos are uploaded at
# LOAD_UPLOADS_PER_S, for LOAD_SECONDS each. Prints p50/p90/p99 per
# operation and the servers' memory per quarter; exits 1 on an
# undocumented error or growing memory. Summaries go to target/load/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${LOAD_SECONDS:-120}" conns="${LOAD_CONNECTIONS:-8}" ups="${LOAD_UPLOADS_PER_S:-1}"
modes="${LOAD_MODES:-embedded cluster}"
pg="${LIGHTBOX_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}"
source bench/lib.sh
cargo build -q --workspace --bins
mkdir -p target/load

run_load() {
    echo "## $1: ${secs}s, $conns connections, $ups uploads/s ($(date -u +%F), $(nproc) cores)"
    shift
    target/debug/load --url "$url" --email "$LIGHTBOX_ADMIN_EMAIL" --password "$LIGHTBOX_ADMIN_PASSWORD" \
        --seconds "$secs" --connections "$conns" --uploads-per-s "$ups" "$@"
}

for mode in $modes; do
    case "$mode" in
    embedded)
        launch embedded lightbox-api
        run_load "embedded" --pid "$pid" --out target/load/embedded.json
        ;;
    cluster)
        db="lbx_load_$$"
        psql -q "$pg/postgres" -c "CREATE DATABASE $db"
        cleanups+=("psql -q '$pg/postgres' -c 'DROP DATABASE IF EXISTS $db WITH (FORCE)'")
        start_s3
        prefix="load$$"
        cleanups+=("drop_stream ${prefix}_renders")
        cluster_env=(DATABASE_URL="$pg/$db" NATS_URL=nats://127.0.0.1:4222 LIGHTBOX_NATS_PREFIX="$prefix"
            LIGHTBOX_STORAGE_URL=s3://bench AWS_ENDPOINT_URL="$s3" AWS_ACCESS_KEY_ID=bench
            AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1)
        env "${cluster_env[@]}" "target/${PROFILE:-debug}/lightbox-api" migrate >/dev/null
        launch worker lightbox-worker "${cluster_env[@]}"
        worker="$pid"
        launch cluster lightbox-api "${cluster_env[@]}"
        run_load "cluster" --pid "$pid" --pid "$worker" --out target/load/cluster.json
        ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
    esac
done
