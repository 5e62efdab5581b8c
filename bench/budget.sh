#!/usr/bin/env bash
# Peak RSS of a render-heavy process under the render memory budget: the
# embedded API (its in-process workers render) takes every corpus photo
# into a folder with three crop rules (one a 4000x4000 pad), all uploaded
# at once, with LIGHTBOX_RENDER_MEMORY_MB = each of BUDGETS ("default" is
# the derived default). Prints the budget, the peak RSS (VmHWM) and the
# time until every photo is ready. For bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${CORPUS:-../shared/corpus}"
budgets="${BUDGETS:-default 1024 512}"
source bench/lib.sh
cargo build -q --workspace --bins
files=("$corpus"/*.jpg "$corpus"/*.png "$corpus"/*.webp)

rpc() { # rpc TOKEN METHOD PARAMS
    curl -sf "$url/rpc" -H 'Content-Type: application/json' ${1:+-H "Authorization: Bearer $1"} \
        -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":$3}"
}

echo "# $(date -u +%F) $(nproc) cores, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB RAM; ${#files[@]} photos, 3 folder rules, worker concurrency $(nproc)"
for budget in $budgets; do
    extra=()
    [ "$budget" = default ] || extra=(LIGHTBOX_RENDER_MEMORY_MB="$budget")
    # All photos at once: above the default per-owner upload cap (4).
    launch "budget-$budget" lightbox-api LIGHTBOX_UPLOADS_PER_OWNER=16 "${extra[@]}"
    token="$(rpc "" auth.login "{\"email\":\"$LIGHTBOX_ADMIN_EMAIL\",\"password\":\"$LIGHTBOX_ADMIN_PASSWORD\"}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["access_token"])')"
    album="$(rpc "$token" album.list '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["items"][0]["id"])')"
    for rule in '"code":"sq","width":1200,"height":1200' '"code":"wide","width":3000,"height":1000,"mode":"fit"' \
        '"code":"poster","width":4000,"height":4000,"mode":"pad","format":"jpg"'; do
        rpc "$token" album.crop.set "{\"album_id\":\"$album\",$rule}" >/dev/null
    done
    start=$(date +%s.%N)
    uploads=()
    for f in "${files[@]}"; do
        curl -sf -o /dev/null "$url/api/v1/images" -H "Authorization: Bearer $token" -F "file=@$f" &
        uploads+=("$!")
    done
    wait "${uploads[@]}"
    for _ in $(seq 600); do
        left="$(rpc "$token" image.list '{"limit":50}' |
            python3 -c 'import json,sys; print(sum(i["status"]=="processing" for i in json.load(sys.stdin)["result"]["items"]))')"
        [ "$left" = 0 ] && break
        sleep 0.5
    done
    took=$(echo "$(date +%s.%N) - $start" | bc)
    failed="$(rpc "$token" image.list '{"limit":50}' |
        python3 -c 'import json,sys; print(sum(i["status"]=="failed" for i in json.load(sys.stdin)["result"]["items"]))')"
    printf '| %s | %s MiB | %.1f s | %s failed |\n' "$budget" \
        "$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")" "$took" "$failed"
    kill "$pid"; wait "$pid" 2>/dev/null || true
done
