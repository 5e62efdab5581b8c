#!/usr/bin/env bash
# Listing at scale (issue 21): LISTING_PHOTOS photos (default 100,000) for
# one owner in 20 folders plus a 50-photo folder, seeded directly in SQLite
# and in PostgreSQL (bench/listing.py clones one real upload's rows), then
# start-up time and p50/p99 of image.list (first page, deep page, one
# folder), album.list, image.get, album.preview and the visitor page of a
# 5,000- and a 50-photo folder, sequential calls on one connection.
set -euo pipefail
cd "$(dirname "$0")/.."
photos="${LISTING_PHOTOS:-100000}" calls="${LISTING_CALLS:-1000}"
engines="${LISTING_ENGINES:-sqlite postgres}"
pg="${LIGHTBOX_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}"
source bench/lib.sh
cargo build -q --workspace --bins
auth=(--email "$LIGHTBOX_ADMIN_EMAIL" --password "$LIGHTBOX_ADMIN_PASSWORD")

# Start-up: from exec to the `listening on` line, in ms.
timed_launch() {
    local started; started=$(date +%s%N)
    launch "$@"
    echo "start-up with $photos photos: $(( ($(date +%s%N) - started) / 1000000 )) ms (polled every 100 ms)"
}

for engine in $engines; do
    echo "## $engine: $photos photos, $calls calls per line ($(date -u +%F), $(nproc) cores)"
    case "$engine" in
    sqlite)
        env_db=()
        db_arg=(--sqlite "$work/$engine/lightbox.db")
        ;;
    postgres)
        db="lbx_listing_$$"
        psql -q "$pg/postgres" -c "CREATE DATABASE $db"
        cleanups+=("psql -q '$pg/postgres' -c 'DROP DATABASE IF EXISTS $db WITH (FORCE)'")
        env_db=(DATABASE_URL="$pg/$db")
        db_arg=(--postgres "$pg/$db")
        ;;
    esac
    launch "$engine" lightbox-api "${env_db[@]}"
    python3 bench/listing.py seed --url "$url" "${auth[@]}" "${db_arg[@]}" --photos "$photos" \
        > "$work/$engine.state"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    timed_launch "$engine" lightbox-api "${env_db[@]}"
    python3 bench/listing.py measure --url "$url" "${auth[@]}" --state "$work/$engine.state" --calls "$calls"
    kill "$pid"; wait "$pid" 2>/dev/null || true
done
