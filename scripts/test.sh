#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, unit tests, and the
# end-to-end suite against the real binaries on SQLite and on PostgreSQL.
#
# Needs: the Rust toolchain, and PostgreSQL on 127.0.0.1:5432 with trust auth
# (override with LIGHTBOX_TEST_POSTGRES=postgres://user@host:port). Installs
# Debian's chromium package for the browser test when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

pg="${LIGHTBOX_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}"
pg_hostport="${pg##*@}"
pg_host="${pg_hostport%%:*}"
pg_port="${pg_hostport##*:}"

step() { printf '\n== %s\n' "$*"; }

step "headless Chromium for the browser test"
if [ ! -x /usr/bin/chromium ]; then
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $as_root apt-get install -y -q chromium || {
        $as_root apt-get update -q && $as_root apt-get install -y -q chromium
    }
fi
/usr/bin/chromium --version

step "format"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets -- -D warnings

step "build the binaries the end-to-end tests start"
cargo build --workspace --bins

step "unit and end-to-end tests (SQLite, embedded)"
cargo test --workspace

step "end-to-end tests again on PostgreSQL ($pg_host:$pg_port)"
if ! (exec 3<>"/dev/tcp/$pg_host/$pg_port") 2>/dev/null; then
    echo "PostgreSQL is not reachable at $pg_host:$pg_port; start it or set LIGHTBOX_TEST_POSTGRES" >&2
    exit 1
fi
# --workspace keeps the feature set of the first pass, so nothing is rebuilt.
LIGHTBOX_TEST_POSTGRES="$pg" cargo test --workspace
