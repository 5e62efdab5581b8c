//! The Helm chart as rendered by the real `helm template` (scripts/test.sh
//! renders the default values and `ci/cluster-values.yaml` into
//! `target/chart/`): the controller's RBAC covers every call it makes, the
//! environment names are ones the binaries read, probes point at declared
//! ports, the chart's CRDs are `crds/`, and the installed CropPresets are
//! valid ones.

use lightbox_controller::rbac::{Call, CALLS};
use serde_json::Value;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rendered(name: &str) -> Vec<Value> {
    let dir = std::env::var_os("LIGHTBOX_CHART_RENDERED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/chart"));
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; scripts/test.sh renders the chart with helm first",
            path.display()
        )
    });
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap()
        .into_iter()
        .filter(|d| d.is_object())
        .collect()
}

fn both() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        ("default", rendered("default.yaml")),
        ("cluster", rendered("cluster.yaml")),
    ]
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn allows(rules: &[Value], call: &Call) -> bool {
    rules.iter().any(|r| {
        let has = |field: &str, want: &str| {
            r[field]
                .as_array()
                .is_some_and(|v| v.iter().any(|x| x == want || x == "*"))
        };
        has("apiGroups", call.group) && has("resources", call.resource) && has("verbs", call.verb)
    })
}

#[test]
fn the_controller_may_make_every_call_it_makes_and_no_more_than_it_needs() {
    for (values, docs) in both() {
        let cluster_rules: Vec<Value> = of_kind(&docs, "ClusterRole")
            .iter()
            .flat_map(|r| r["rules"].as_array().cloned().unwrap_or_default())
            .collect();
        let ns_rules: Vec<Value> = of_kind(&docs, "Role")
            .iter()
            .flat_map(|r| r["rules"].as_array().cloned().unwrap_or_default())
            .collect();
        for call in CALLS {
            let rules = if call.own_namespace {
                &ns_rules
            } else {
                &cluster_rules
            };
            assert!(allows(rules, call), "{values}: RBAC misses {call:?}");
        }
        for rule in cluster_rules.iter().chain(&ns_rules) {
            for verb in rule["verbs"].as_array().unwrap() {
                assert_ne!(verb, "*", "{values}: wildcard verb");
                assert_ne!(verb, "delete", "{values}: the controller deletes nothing");
            }
            for res in rule["resources"].as_array().unwrap() {
                assert_ne!(res, "*", "{values}: wildcard resource");
                assert_ne!(res, "secrets", "{values}: the controller reads no secrets");
            }
        }
    }
}

/// Every string literal `"NAME"` the binaries read from their environment.
fn known_env() -> Vec<String> {
    let mut text = String::new();
    for f in [
        "core/src/config.rs",
        "core/src/store.rs",
        "controller/src/lib.rs",
    ] {
        text.push_str(&std::fs::read_to_string(root().join(f)).unwrap());
    }
    let mut names = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        if !piece.is_empty() && piece.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            names.push(piece.to_owned());
        }
    }
    // object_store's AmazonS3Builder::from_env reads the standard AWS variables.
    names.extend(["AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"].map(String::from));
    names
}

fn containers(docs: &[Value]) -> Vec<(String, Value)> {
    of_kind(docs, "Deployment")
        .iter()
        .flat_map(|d| {
            let name = d["metadata"]["name"].as_str().unwrap().to_owned();
            d["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |c| (name.clone(), c.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn environment_names_are_configuration_keys() {
    let known = known_env();
    for (values, docs) in both() {
        for (deployment, c) in containers(&docs) {
            for env in c["env"].as_array().unwrap() {
                let name = env["name"].as_str().unwrap();
                assert!(
                    known.iter().any(|k| k == name),
                    "{values}/{deployment}: {name} is read by no binary"
                );
            }
        }
    }
}

#[test]
fn probes_use_declared_ports_and_every_container_is_locked_down() {
    for (values, docs) in both() {
        for (deployment, c) in containers(&docs) {
            let ports: Vec<&Value> = c["ports"].as_array().unwrap().iter().collect();
            for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
                let port = &c[probe]["httpGet"]["port"];
                assert!(
                    ports
                        .iter()
                        .any(|p| p["name"] == *port || p["containerPort"] == *port),
                    "{values}/{deployment}: {probe} port {port} is not a container port"
                );
            }
            assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
            assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
            let sc = &c["securityContext"];
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{deployment}");
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{deployment}");
            assert_eq!(sc["runAsNonRoot"], true, "{deployment}");
            assert_eq!(sc["capabilities"]["drop"][0], "ALL", "{deployment}");
            assert!(
                c["resources"]["requests"].is_object(),
                "{deployment}: no requests"
            );
            let listen = c["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "LIGHTBOX_LISTEN");
            let port = ports[0]["containerPort"].as_i64().unwrap();
            assert_eq!(
                listen.unwrap()["value"].as_str().unwrap(),
                format!("0.0.0.0:{port}"),
                "{values}/{deployment}: listens where its port is declared"
            );
        }
    }
}

#[test]
fn the_charts_crds_are_the_generated_ones() {
    let dir = root().join("charts/lightbox/crds");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = lightbox_controller::resources::crds_yaml()
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    for name in names {
        let chart = std::fs::read_to_string(dir.join(&name)).unwrap();
        let crds = std::fs::read_to_string(root().join("crds").join(&name)).unwrap();
        assert_eq!(
            chart, crds,
            "charts/lightbox/crds/{name} differs from crds/{name}"
        );
    }
}

#[test]
fn installed_crop_presets_are_valid_presets() {
    for (values, docs) in both() {
        let presets = of_kind(&docs, "CropPreset");
        assert!(!presets.is_empty(), "{values}: no CropPreset installed");
        for p in presets {
            let spec: lightbox_controller::resources::CropPresetSpec =
                serde_json::from_value(p["spec"].clone()).unwrap();
            let core: lightbox_core::render::spec::CropSpec = (&spec).into();
            core.validate()
                .unwrap_or_else(|e| panic!("{values}: {p}: {e:?}"));
        }
    }
}
