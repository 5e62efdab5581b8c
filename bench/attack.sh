#!/usr/bin/env bash
# Abuse beside load (issue 17): the embedded server takes the usual load
# test (bench/src/load: readers and uploads, failing on undocumented errors
# or memory that keeps growing) while bench/attack.py floods logins with
# random emails (also from one address forging rotating `Forwarded`
# headers), floods account.setPassword with wrong current passwords from a
# stolen session, holds 100 slowloris connections, 20 zips and 16 HTTP/2
# connections of 16 streams nobody reads, 20 JSON-RPC bodies at a trickle,
# batches of rpc.discover, and one owner flooding the render queue while
# another owner's photo is timed to ready.
# Fails when the load test does (normal requests must keep answering, RSS
# flat) or when an attack outlived its bound. ATTACK_SECONDS (60).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${ATTACK_SECONDS:-60}"
source bench/lib.sh
cargo build -q --workspace --bins
mkdir -p target/load
# 127.0.0.1 is a trusted proxy, so the flood can come from many addresses
# (X-Forwarded-For) while the load test signs in from 127.0.0.1 itself.
launch attacked lightbox-api LIGHTBOX_HEADER_READ_TIMEOUT_S=5 LIGHTBOX_IDLE_TIMEOUT_S=10 \
    LIGHTBOX_ZIP_SEND_TIMEOUT_S=5 LIGHTBOX_TRUSTED_PROXIES=127.0.0.1
# A photo bigger than the socket buffers, for the unread zips.
token="$(curl -sf "$url/rpc" -H 'Content-Type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"auth.login\",\"params\":{\"email\":\"$LIGHTBOX_ADMIN_EMAIL\",\"password\":\"$LIGHTBOX_ADMIN_PASSWORD\"}}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["access_token"])')"
curl -sf -o /dev/null "$url/api/v1/images" -H "Authorization: Bearer $token" \
    -F "file=@${CORPUS:-../shared/corpus}/elephants_5640x3172_prog.jpg"
echo "## attacked: ${secs}s of load beside login floods, slowloris, slow bodies, unread zips and h2 streams, discover batches and a render flood ($(date -u +%F), $(nproc) cores)"
python3 bench/attack.py --url "$url" --email "$LIGHTBOX_ADMIN_EMAIL" --password "$LIGHTBOX_ADMIN_PASSWORD" \
    --seconds "$secs" --header-timeout 5 --zip-send-timeout 5 --idle-timeout 10 &
attacker=$!
status=0
target/debug/load --url "$url" --email "$LIGHTBOX_ADMIN_EMAIL" --password "$LIGHTBOX_ADMIN_PASSWORD" \
    --seconds "$secs" --connections 4 --uploads-per-s 1 --pid "$pid" --out target/load/attacked.json || status=1
wait "$attacker" || status=1
exit "$status"
