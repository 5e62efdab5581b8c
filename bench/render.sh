#!/usr/bin/env bash
# Render throughput and peak memory: Lightbox's pipeline and libvips side by
# side in one run, over ../shared/corpus, two images at a time.
# Installs libvips (Debian) and pyvips (PyPI) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${CORPUS:-../shared/corpus}"
files=("$corpus"/*.jpg "$corpus"/*.png "$corpus"/*.webp)
export ROUNDS="${ROUNDS:-3}" PARALLEL="${PARALLEL:-2}"

if ! python3 -c 'import pyvips' 2>/dev/null; then
    command -v vips >/dev/null || { apt-get update -qq && apt-get install -y -qq libvips-tools; }
    python3 -m pip install -q pyvips
fi
cargo build -q -p lightbox-bench --bin render-bench

echo "# $(date -u +%F) $(nproc) cores; ${#files[@]} images x $ROUNDS rounds, $PARALLEL at a time"
for i in 1 2; do   # alternate, so drift between the two hits both
    ./target/debug/render-bench "${files[@]}"
    python3 bench/vips_render.py "${files[@]}"
done
