# Shared by the bench scripts: start a binary on loopback, wait for its
# `listening on` line, and stop everything by PID on exit.
# shellcheck shell=bash
work="$(mktemp -d)"
pids=()
cleanups=()
finish() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    for c in "${cleanups[@]}"; do eval "$c" || true; done
    rm -rf "$work"
}
trap finish EXIT

export LIGHTBOX_ADMIN_EMAIL=bench@example.com LIGHTBOX_ADMIN_PASSWORD=bench-password-1
export LIGHTBOX_SIGNING_KEY=bench-signing-key-of-at-least-32-bytes LIGHTBOX_LOG=warn

# launch NAME BINARY [VAR=VALUE]...: sets $url and $pid.
launch() {
    local name="$1" binary="$2"; shift 2
    mkdir -p "$work/$name"
    # Metrics on a free port too: several processes share the loopback.
    env LIGHTBOX_LISTEN=127.0.0.1:0 LIGHTBOX_METRICS_LISTEN=127.0.0.1:0 \
        LIGHTBOX_DATA_DIR="$work/$name" "$@" \
        "target/${PROFILE:-debug}/$binary" >"$work/$name.out" 2>"$work/$name.log" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 600); do
        url="$(sed -n 's/^listening on //p' "$work/$name.out")"
        [ -n "$url" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$name did not start:" >&2
    cat "$work/$name.log" >&2
    return 1
}

# The S3 test server the test script installs, on a free port: sets $s3.
start_s3() {
    local moto="${LIGHTBOX_TEST_MOTO:-target/tools/moto/bin/moto_server}" port
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    "$moto" -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    pids+=("$!")
    s3="http://127.0.0.1:$port"
    for _ in $(seq 300); do
        curl -sf -X PUT "$s3/bench" >/dev/null && return 0
        sleep 0.2
    done
    echo "the S3 test server did not start" >&2
    return 1
}

# Removes a JetStream stream from the shared NATS server.
drop_stream() {
    exec 9<>/dev/tcp/127.0.0.1/4222
    printf 'CONNECT {"verbose":false}\r\nPUB $JS.API.STREAM.DELETE.%s 0\r\n\r\nPING\r\n' "$1" >&9
    timeout 2 head -c 200 <&9 >/dev/null || true
    exec 9<&-
}
