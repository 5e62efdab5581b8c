#!/usr/bin/env bash
# Hardening, all in one place: the authorization matrix, hostile input,
# bad files and fault tests (cargo test), then fuzzing (scripts/fuzz.sh),
# load and soak against embedded and cluster setups (bench/load.sh), the
# same load beside a login flood, slowloris clients and unread zips
# (bench/attack.sh), and serving speed against nginx (bench/serve.sh).
#
# Bounds (defaults are the longer runs recorded in bench/RESULTS.md):
#   FUZZ_SECONDS per target (60; 0 skips fuzzing), LOAD_SECONDS per setup (120),
#   SERVE_SECONDS per wrk run (15), SERVE_MIN_RATIO (0.60), ATTACK_SECONDS (60).
# scripts/test.sh calls this with short bounds and HARDENING_TESTS=0, as
# it has run those tests already.
set -euo pipefail
cd "$(dirname "$0")/.."
pg="${LIGHTBOX_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}"

if [ "${HARDENING_TESTS:-1}" = 1 ]; then
    echo "== authorization, hostile input, bad files and faults"
    cargo build -q --workspace --bins
    LIGHTBOX_TEST_POSTGRES_CLUSTER="$pg" cargo test --workspace \
        --test authorization --test foreign --test hostile --test bad_files --test faults \
        --test abuse_login --test abuse_connections --test abuse_http2 --test abuse_downloads --test abuse_renders
fi
if [ "${FUZZ_SECONDS:-60}" = 0 ]; then
    echo "== fuzzing skipped (FUZZ_SECONDS=0)"
else
    echo "== fuzzing (${FUZZ_SECONDS:-60}s per target)"
    scripts/fuzz.sh
fi
echo "== load and soak (${LOAD_SECONDS:-120}s per setup)"
bench/load.sh
echo "== abuse beside load: login flood, slowloris, unread zips (${ATTACK_SECONDS:-60}s)"
bench/attack.sh
echo "== serving speed against nginx (${SERVE_SECONDS:-15}s per run)"
bench/serve.sh
