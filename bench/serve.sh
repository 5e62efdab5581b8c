#!/usr/bin/env bash
# Serving speed: one render served by Lightbox through /i/{id}/{file}
# (embedded mode) and the same bytes served by nginx (Debian package) from
# disk, both on loopback, measured with wrk in the same run, alternating.
# Reports requests/s of both and the ratio (target: Lightbox at least 60%
# of nginx), and checks the cache headers Lightbox sends on the way.
# Installs nginx and wrk when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${SERVE_SECONDS:-15}" runs="${SERVE_RUNS:-3}" conns="${SERVE_CONNECTIONS:-32}" files="${SERVE_FILES:-thumb large}"
# The dragonfly's medium and large renders are the issue's 104 KB and 195 KB files.
photo="${SERVE_PHOTO:-sunset_4272x2848.jpg}"
min_ratio="${SERVE_MIN_RATIO:-0.60}"
if ! command -v wrk >/dev/null || ! [ -x /usr/sbin/nginx ]; then
    as_root=""; [ "$(id -u)" -eq 0 ] || as_root="sudo"
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q wrk nginx-light >/dev/null
fi
source bench/lib.sh
# PROFILE=release measures what the Dockerfile ships; the default is the
# dev profile the tests build.
export PROFILE="${PROFILE:-debug}"
# Only the binary it runs: the controller and worker binaries are not needed.
cargo build -q --profile "${PROFILE/debug/dev}" -p lightbox-api --bin lightbox-api
launch embedded lightbox-api

rpc() {
    curl -sf "$url/rpc" -H 'content-type: application/json' ${token:+-H "authorization: Bearer $token"} \
        -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}"
}
field() { python3 -c 'import json,sys; v=json.load(sys.stdin); [v:=v[k] for k in sys.argv[1:]]; print(v)' "$@"; }
token="$(rpc auth.login "{\"email\":\"$LIGHTBOX_ADMIN_EMAIL\",\"password\":\"$LIGHTBOX_ADMIN_PASSWORD\"}" | field result access_token)"
id="$(curl -sf "$url/api/v1/images" -H "authorization: Bearer $token" \
    -F "file=@../shared/corpus/$photo;type=image/jpeg" | field id)"
for _ in $(seq 300); do
    [ "$(rpc image.get "{\"id\":\"$id\"}" | field result status)" = ready ] && break
    sleep 0.2
done

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
mkdir -p "$work/www/i/$id"
cat >"$work/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    # wrk keeps its connections; Lightbox never closes one after N
    # requests, so neither does nginx (its default closes at 1,000, and
    # the reconnects cost it up to a fifth of its rate on 100 KB files).
    keepalive_requests 1000000;
    open_file_cache max=64;
    types { image/webp webp; }
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        location /i/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
    }
}
CONF
echo "# $(date -u +%F) $(nproc) cores; $photo; wrk -t2 -c$conns -d${secs}s per run, $runs runs each, alternating; Lightbox embedded ($PROFILE build)"
echo "| file | bytes | Lightbox req/s | nginx req/s | Lightbox / nginx |"
echo "|---|---:|---:|---:|---:|"
fail=0
for file in $files; do
    path="$(rpc image.get "{\"id\":\"$id\"}" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["result"]["renders"]:
    if r["crop"] == sys.argv[1]: print(r["url"][r["url"].index("/i/"):])' "$file")"
    curl -sf "$url$path" -o "$work/www/i/$id/$file.webp"
    chmod -R a+rX "$work"
    headers="$(curl -sfI "$url$path")"
    for h in 'cache-control: public, max-age=31536000, immutable' 'etag: "' 'content-type: image/webp' 'x-content-type-options: nosniff'; do
        grep -qi "^$h" <<<"$headers" || { echo "Lightbox lost the header '$h' on $path" >&2; fail=1; }
    done
    /usr/sbin/nginx -c "$work/nginx.conf" &
    nginx_pid=$!
    pids+=("$nginx_pid")
    for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port$path" && break; sleep 0.1; done
    cmp -s <(curl -sf "http://127.0.0.1:$port$path") <(curl -sf "$url$path") || { echo "different bytes" >&2; exit 1; }
    # Both copies start from the same page-cache state. How a file was
    # written decides the size of the pages it is cached in, and that moved
    # sendfile's cost by a fifth on a 6.18 kernel: nginx's copy, written by
    # curl 16 KiB at a time, cost 46-50 us per 195 KB request where the same
    # bytes written whole (as the blob store writes renders) cost 58-60 us,
    # in either server. Evicted, both are read back the same way.
    version="${path##*v=}"
    ours="$(find "$work/embedded" -type f -path "*/renders/$id/$file.v$version.webp")"
    [ "$(wc -l <<<"$ours")" = 1 ] && cmp -s "$ours" "$work/www/i/$id/$file.webp" \
        || { echo "cannot find Lightbox's file of $path" >&2; exit 1; }
    python3 - "$ours" "$work/www/i/$id/$file.webp" <<'PY'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
    rps() { wrk -t2 -c"$conns" -d"${secs}s" "$1" | sed -n 's/^Requests\/sec: *//p'; }
    lb=0; ng=0
    for pass in $(seq "$runs"); do   # alternate, so drift hits both
        one_lb="$(rps "$url$path")" one_ng="$(rps "http://127.0.0.1:$port$path")"
        echo "  $file pass $pass: Lightbox $one_lb, nginx $one_ng req/s" >&2
        lb="$(python3 -c "print($lb + $one_lb)")"
        ng="$(python3 -c "print($ng + $one_ng)")"
    done
    kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
    bytes="$(stat -c %s "$work/www/i/$id/$file.webp")"
    ratio="$(python3 -c "print(f'{$lb / $ng:.2f}')")"
    printf '| %s.webp | %s | %.0f | %.0f | %s |\n' "$file" "$bytes" "$(python3 -c "print($lb/$runs)")" "$(python3 -c "print($ng/$runs)")" "$ratio"
    python3 -c "import sys; sys.exit(0 if $ratio >= $min_ratio else 1)" || { echo "below $min_ratio of nginx on $file" >&2; fail=1; }
done
exit "$fail"
