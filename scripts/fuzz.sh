#!/usr/bin/env bash
# Fuzzing with cargo fuzz (libFuzzer, AddressSanitizer): the JSON-RPC
# envelope and params (through the real router), the multipart upload path,
# probing and decoding through the render pipeline, the alias normaliser
# and the cursor decoder. Each target first replays every input that once
# crashed it (fuzz/regressions/TARGET), then runs FUZZ_SECONDS (default 60)
# from its seeds (fuzz/seeds/TARGET) plus what earlier runs found
# (fuzz/corpus/TARGET, not committed). A crash stops the script; its input
# is in fuzz/artifacts/TARGET: fix it, then keep it under fuzz/regressions.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-alias cursor decode upload rpc}"
tools="$PWD/target/tools/fuzz"
if [ ! -x "$tools/bin/cargo-fuzz" ]; then
    cargo install -q --locked --root "$tools" cargo-fuzz@0.13.2
fi
export PATH="$tools/bin:$PATH"
# libFuzzer's coverage instrumentation and the sanitizer are unstable
# compiler flags; the stable toolchain takes them under RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
cargo fuzz build --fuzz-dir fuzz

for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    # The harness keeps one server for the whole process on purpose.
    opts=(-rss_limit_mb=4096 -timeout=30 -detect_leaks=0 -max_len=65536)
    if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
        echo "== $t: replaying fuzz/regressions/$t"
        cargo fuzz run --fuzz-dir fuzz "$t" "fuzz/regressions/$t" -- "${opts[@]}" -runs=0
    fi
    echo "== $t: ${secs}s"
    cargo fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- "${opts[@]}" \
        -max_total_time="$secs" -print_final_stats=1 2>&1 | grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|INFO: seed|==[0-9]+==ERROR|SUMMARY)|panicked' || true
    test "${PIPESTATUS[0]}" -eq 0
done
