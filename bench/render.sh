#!/usr/bin/env bash
# Render throughput, CPU and peak memory over ../shared/corpus, two images
# at a time, all in one run and alternated so drift hits every tool:
#   render-bench         Lightbox's pipeline alone (decode, renders, encode)
#   lightbox (HTTP API)  the whole service: upload, store, queue, render job,
#                        recording; a fresh embedded lightbox-api per round,
#                        once per client in API_WAITS ("5": the client asks
#                        image.get to wait up to 5 s, `Prefer: wait=5`; "0"
#                        polls every 20 ms; "5 0" runs both)
#   libvips (pyvips)     the same cascade, every stage materialised, one
#                        image per worker process, VIPS_CONCURRENCY=1,
#                        JPEGs shrunk on load by libvips's own rule; and
#                        again by Lightbox's rule (a shortcut libvips's
#                        thumbnail does not take), to show what it is worth
#   libvips (pyvips thumbnail) its `thumbnail` for the 2048 px render, then
#                        `thumbnail_image` down the cascade: libvips's
#                        fastest line on this corpus, the one to beat
#   libvips (vipsthumbnail) the CLI per image and preset
# Installs libvips (Debian) and pyvips (PyPI) when missing. ROUNDS (3) is
# how often each file goes through each tool per pass; PASSES (2).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${CORPUS:-../shared/corpus}"
files=("$corpus"/*.jpg "$corpus"/*.png "$corpus"/*.webp)
export ROUNDS="${ROUNDS:-3}" PARALLEL="${PARALLEL:-2}"

if ! python3 -c 'import pyvips' 2>/dev/null || ! command -v vipsthumbnail >/dev/null; then
    command -v vipsthumbnail >/dev/null || { apt-get update -qq && apt-get install -y -qq libvips-tools; }
    python3 -c 'import pyvips' 2>/dev/null || python3 -m pip install -q pyvips
fi
source bench/lib.sh
# PROFILE=release measures what the Dockerfile ships (thin LTO, no
# overflow checks); the default is the debug build the tests use.
export PROFILE="${PROFILE:-debug}"
# The whole workspace, as the other scripts and the tests build it: with
# `-p` cargo unifies features differently and rebuilds half the tree.
cargo build -q --profile "${PROFILE/debug/dev}" --workspace --bins

echo "# $(date -u +%F) $(nproc) cores, $PROFILE build; ${#files[@]} images x $ROUNDS rounds, $PARALLEL at a time; $(vips --version)"
for pass in $(seq "${PASSES:-2}"); do
    # The heap the render workers run with (lightbox_core::limits::heap),
    # set through glibc's tunables: the bench links lightbox-render alone.
    GLIBC_TUNABLES="glibc.malloc.arena_max=$(nproc):glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=$((64 << 20))" \
        "./target/$PROFILE/render-bench" "${files[@]}"
    python3 bench/vips_render.py "${files[@]}"
    for wait in ${API_WAITS:-5}; do
        launch "api$pass-$wait" lightbox-api
        API_WAIT="$wait" python3 bench/render_api.py --url "$url" --pid "$pid" \
            --email "$LIGHTBOX_ADMIN_EMAIL" --password "$LIGHTBOX_ADMIN_PASSWORD" "${files[@]}"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
    done
done
