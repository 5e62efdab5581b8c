//! The Helm chart as rendered by the real `helm template`: scripts/test.sh
//! renders each `charts/lightbox/ci/NAME-values.yaml` into
//! `target/chart/NAME.yaml` (and `first-install.yaml`, a release that brings
//! the CRDs). Checked here: RBAC covers every call the controller makes and
//! no more, environment names are ones the binaries read, probes and ports,
//! the CRDs are the generated ones, two releases never collide, S3 keys only
//! ever come from a Secret, metrics stay off the Ingress, and every knob
//! lands on its pod.

use lightbox_controller::rbac::{Call, CALLS, UNINSTALL_CALLS};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

const MATRIX: [&str; 8] = [
    "default",
    "cluster",
    "irsa",
    "two-releases-a",
    "two-releases-b",
    "scheduling",
    "gitops",
    "crds-kept",
];

fn rendered(name: &str) -> Vec<Value> {
    let dir = std::env::var_os("LIGHTBOX_CHART_RENDERED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/chart"));
    let path = dir.join(format!("{name}.yaml"));
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

fn all() -> Vec<(&'static str, Vec<Value>)> {
    MATRIX.iter().map(|n| (*n, rendered(n))).collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn named<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    of_kind(docs, kind)
        .into_iter()
        .find(|d| d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn allows(rules: &[Value], call: &Call) -> bool {
    rules.iter().any(|r| {
        let has = |field: &str, want: &str| strs(&r[field]).contains(&want);
        has("apiGroups", call.group) && has("resources", call.resource) && has("verbs", call.verb)
    })
}

/// The rules bound to a ServiceAccount, per namespace ("*" = cluster-wide;
/// `release` for bindings rendered without a namespace).
fn rules_of(docs: &[Value], account: &str, release: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for binding in of_kind(docs, "RoleBinding")
        .into_iter()
        .chain(of_kind(docs, "ClusterRoleBinding"))
    {
        if !binding["subjects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == account)
        {
            continue;
        }
        let role = named(
            docs,
            binding["roleRef"]["kind"].as_str().unwrap(),
            binding["roleRef"]["name"].as_str().unwrap(),
        );
        let ns = match binding["kind"].as_str() {
            Some("ClusterRoleBinding") => "*",
            _ => binding["metadata"]["namespace"].as_str().unwrap_or(release),
        };
        for rule in role["rules"].as_array().unwrap() {
            out.push((ns.to_owned(), rule.clone()));
        }
    }
    out
}

fn deployment<'a>(docs: &'a [Value], component: &str) -> &'a Value {
    of_kind(docs, "Deployment")
        .into_iter()
        .find(|d| d["metadata"]["labels"]["app.kubernetes.io/component"] == component)
        .unwrap_or_else(|| panic!("no {component} Deployment"))
}

fn env<'a>(container: &'a Value, name: &str) -> Option<&'a Value> {
    container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
}

#[test]
fn the_controller_may_make_every_call_it_makes_and_no_more_than_it_needs() {
    for (values, docs) in all() {
        let controller = deployment(&docs, "controller");
        let pod = &controller["spec"]["template"]["spec"];
        let account = pod["serviceAccountName"].as_str().unwrap();
        let release = release_namespace(values);
        let bound = rules_of(&docs, account, release);
        let watched = env(&pod["containers"][0], "LIGHTBOX_WATCH_NAMESPACES").unwrap()["value"]
            .as_str()
            .unwrap()
            .to_owned();
        let scopes: Vec<&str> = if watched.is_empty() {
            vec!["*"]
        } else {
            watched.split(',').collect()
        };
        let granted = |ns: &str, call: &Call| {
            let rules: Vec<Value> = bound
                .iter()
                .filter(|(n, _)| n == ns)
                .map(|(_, r)| r.clone())
                .collect();
            allows(&rules, call)
        };
        for call in CALLS {
            if call.own_namespace {
                assert!(granted(release, call), "{values}: RBAC misses {call:?}");
                continue;
            }
            for ns in &scopes {
                assert!(
                    granted(ns, call),
                    "{values}: RBAC misses {call:?} in {ns:?}"
                );
            }
        }
        for (_, rule) in &bound {
            for verb in strs(&rule["verbs"]) {
                assert_ne!(verb, "*", "{values}: wildcard verb");
                assert_ne!(verb, "delete", "{values}: the controller deletes nothing");
            }
            for res in strs(&rule["resources"]) {
                assert_ne!(res, "*", "{values}: wildcard resource");
                assert_ne!(res, "secrets", "{values}: the controller reads no secrets");
            }
        }
        // The pre-delete hook has its own account, and what it needs.
        let hook = named(&docs, "Job", "lightbox-uninstall");
        let hook_account = hook["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .unwrap();
        let hook_rules: Vec<Value> = rules_of(&docs, hook_account, release)
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        for call in UNINSTALL_CALLS {
            assert!(allows(&hook_rules, call), "{values}: hook misses {call:?}");
        }
    }
}

/// Where scripts/test.sh renders each file.
fn release_namespace(values: &str) -> &'static str {
    match values {
        "two-releases-a" => "team-a",
        "two-releases-b" => "team-b",
        _ => "lightbox",
    }
}

#[test]
fn the_controller_watches_its_namespaces_and_leads_on_its_own_lease() {
    let default = rendered("default");
    let c = &deployment(&default, "controller")["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        env(c, "LIGHTBOX_WATCH_NAMESPACES").unwrap()["value"],
        "lightbox"
    );
    assert_eq!(
        env(c, "LIGHTBOX_LEASE_NAME").unwrap()["value"],
        "lightbox-controller"
    );
    assert!(of_kind(&default, "ClusterRoleBinding").is_empty());

    let b = rendered("two-releases-b");
    let roles: BTreeSet<(String, String)> = of_kind(&b, "Role")
        .iter()
        .filter(|r| {
            r["metadata"]["name"]
                .as_str()
                .unwrap()
                .ends_with("controller")
        })
        .map(|r| {
            let ns = r["metadata"]["namespace"].as_str().unwrap_or("team-b");
            (
                ns.to_owned(),
                r["metadata"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("team-b", "lightbox-controller"),
        ("team-b-staging", "team-b-lightbox-controller"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(roles, want);

    let all_ns = rendered("crds-kept");
    let c = &deployment(&all_ns, "controller")["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(env(c, "LIGHTBOX_WATCH_NAMESPACES").unwrap()["value"], "");
    named(
        &all_ns,
        "ClusterRoleBinding",
        "lightbox-lightbox-controller",
    );
}

#[test]
fn two_releases_of_one_name_in_two_namespaces_never_collide() {
    let mut seen = BTreeSet::new();
    for values in ["two-releases-a", "two-releases-b"] {
        let ns = release_namespace(values);
        for doc in rendered(values) {
            let kind = doc["kind"].as_str().unwrap().to_owned();
            let cluster_scoped = matches!(
                kind.as_str(),
                "ClusterRole" | "ClusterRoleBinding" | "CustomResourceDefinition"
            );
            let namespace = if cluster_scoped {
                String::new()
            } else {
                doc["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or(ns)
                    .to_owned()
            };
            let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
            assert!(
                seen.insert((kind.clone(), namespace.clone(), name.clone())),
                "{values}: {kind} {namespace}/{name} is also the other release's"
            );
        }
    }
    // The Lease lives in each release's namespace under the release's name.
    assert!(of_kind(&rendered("two-releases-b"), "CustomResourceDefinition").is_empty());
}

/// Every string literal `"NAME"` the binaries read from their environment.
fn known_env() -> Vec<String> {
    let mut text = String::new();
    for f in [
        "core/src/config.rs",
        "core/src/store/mod.rs",
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
    // object_store reads the standard AWS variables.
    names.extend(
        [
            "AWS_REGION",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ENDPOINT_URL",
        ]
        .map(String::from),
    );
    names
}

fn containers(docs: &[Value]) -> Vec<(String, Value)> {
    of_kind(docs, "Deployment")
        .into_iter()
        .chain(of_kind(docs, "Job"))
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
    let is_known = |name: &str| known.iter().any(|k| k == name);
    for (values, docs) in all() {
        for (deployment, c) in containers(&docs) {
            for env in c["env"].as_array().unwrap() {
                let name = env["name"].as_str().unwrap();
                let extra = values == "scheduling" && name == "RUST_BACKTRACE";
                assert!(
                    extra || is_known(name),
                    "{values}/{deployment}: {name} is read by no binary"
                );
            }
        }
        for cm in of_kind(&docs, "ConfigMap") {
            for name in cm["data"].as_object().unwrap().keys() {
                assert!(
                    is_known(name),
                    "{values}: ConfigMap key {name} is read by no binary"
                );
            }
        }
    }
}

#[test]
fn probes_use_declared_ports_and_every_container_is_locked_down() {
    for (values, docs) in all() {
        let config = &of_kind(&docs, "ConfigMap")[0]["data"];
        let metrics = config["LIGHTBOX_METRICS_LISTEN"].as_str().unwrap();
        for component in ["api", "worker", "controller"] {
            let c = &deployment(&docs, component)["spec"]["template"]["spec"]["containers"][0];
            let ports = c["ports"].as_array().unwrap();
            // On the metrics listener: request traffic cannot exhaust it.
            for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
                assert_eq!(
                    c[probe]["httpGet"]["port"], "metrics",
                    "{values}/{component}"
                );
            }
            assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
            assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
            let sc = &c["securityContext"];
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{values}/{component}");
            assert_eq!(
                sc["allowPrivilegeEscalation"], false,
                "{values}/{component}"
            );
            assert_eq!(sc["runAsNonRoot"], true, "{values}/{component}");
            assert_eq!(sc["capabilities"]["drop"][0], "ALL", "{values}/{component}");
            assert!(
                c["resources"]["requests"].is_object(),
                "{component}: no requests"
            );
            let port = |name: &str| {
                ports.iter().find(|p| p["name"] == name).unwrap()["containerPort"]
                    .as_i64()
                    .unwrap()
            };
            assert_eq!(
                env(c, "LIGHTBOX_LISTEN").unwrap()["value"]
                    .as_str()
                    .unwrap(),
                format!("0.0.0.0:{}", port("http")),
                "{values}/{component}: listens where its port is declared"
            );
            assert_eq!(metrics, format!("0.0.0.0:{}", port("metrics")), "{values}");
        }
    }
}

#[test]
fn s3_keys_only_ever_come_from_a_secret() {
    for (values, docs) in all() {
        let chart_secret = of_kind(&docs, "Secret").first().map(|s| (*s).clone());
        for (workload, c) in containers(&docs) {
            for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
                let Some(e) = env(&c, name) else { continue };
                assert!(
                    e.get("value").is_none(),
                    "{values}/{workload}: {name} inline"
                );
                let secret = e["valueFrom"]["secretKeyRef"]["name"].as_str().unwrap();
                // The chart's own Secret holds a key only when one was given.
                if let Some(s) = chart_secret
                    .as_ref()
                    .filter(|s| s["metadata"]["name"] == secret)
                {
                    let v = s["stringData"][name].as_str().unwrap_or("");
                    assert!(
                        !v.is_empty(),
                        "{values}/{workload}: {name} from an empty key"
                    );
                }
            }
        }
        for cm in of_kind(&docs, "ConfigMap") {
            assert!(cm["data"]["AWS_ACCESS_KEY_ID"].is_null(), "{values}");
        }
    }
    let irsa = rendered("irsa");
    for (workload, c) in containers(&irsa) {
        assert!(env(&c, "AWS_ACCESS_KEY_ID").is_none(), "irsa/{workload}");
        assert!(
            env(&c, "AWS_SECRET_ACCESS_KEY").is_none(),
            "irsa/{workload}"
        );
    }
    assert!(of_kind(&irsa, "Secret")[0]["stringData"]["AWS_ACCESS_KEY_ID"].is_null());
    for component in ["api", "worker"] {
        let pod = &deployment(&irsa, component)["spec"]["template"]["spec"];
        let account = named(
            &irsa,
            "ServiceAccount",
            pod["serviceAccountName"].as_str().unwrap(),
        );
        let arn = &account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"];
        assert!(arn
            .as_str()
            .unwrap()
            .ends_with(&format!("lightbox-{component}")));
    }
    // An existing account is used, not created.
    let pod = &deployment(&irsa, "controller")["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "platform-lightbox-controller");
    assert!(of_kind(&irsa, "ServiceAccount")
        .iter()
        .all(|s| s["metadata"]["name"] != "platform-lightbox-controller"));
}

#[test]
fn metrics_and_readiness_never_sit_behind_the_ingress() {
    for (values, docs) in all() {
        for ingress in of_kind(&docs, "Ingress") {
            for rule in ingress["spec"]["rules"].as_array().unwrap() {
                for path in rule["http"]["paths"].as_array().unwrap() {
                    let p = path["path"].as_str().unwrap();
                    assert_eq!(path["pathType"], "Prefix");
                    for private in ["/readyz", "/metrics"] {
                        let covered =
                            p == "/" || private == p || private.starts_with(&format!("{p}/"));
                        assert!(!covered, "{values}: Ingress path {p} routes {private}");
                    }
                    let backend = &path["backend"]["service"];
                    assert_eq!(backend["port"]["name"], "http", "{values}");
                    let service = named(&docs, "Service", backend["name"].as_str().unwrap());
                    for port in service["spec"]["ports"].as_array().unwrap() {
                        assert_eq!(port["targetPort"], "http", "{values}: {service}");
                    }
                }
            }
        }
        for monitor in of_kind(&docs, "ServiceMonitor") {
            assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
        }
        for monitor in of_kind(&docs, "PodMonitor") {
            assert_eq!(monitor["spec"]["podMetricsEndpoints"][0]["port"], "metrics");
        }
    }
    let cluster = rendered("cluster");
    let monitor = of_kind(&cluster, "ServiceMonitor")[0];
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    let hosts: Vec<&str> = of_kind(&cluster, "Ingress")[0]["spec"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts,
        [
            "photos.example.com",
            "photos.example.org",
            "img.example.com"
        ]
    );
    assert_eq!(of_kind(&cluster, "NetworkPolicy").len(), 2);
}

#[test]
fn every_scheduling_knob_lands_on_its_pod() {
    let docs = rendered("scheduling");
    for component in ["api", "worker", "controller"] {
        let template = &deployment(&docs, component)["spec"]["template"];
        let pod = &template["spec"];
        let c = &pod["containers"][0];
        let at = |what: &str| format!("{component}: {what}");
        assert_eq!(
            pod["nodeSelector"]["example.com/pool"],
            "general",
            "{}",
            at("nodeSelector")
        );
        assert_eq!(
            pod["tolerations"][0]["value"],
            "photos",
            "{}",
            at("tolerations")
        );
        assert!(
            pod["affinity"]["nodeAffinity"].is_object(),
            "{}",
            at("affinity")
        );
        let spread = &pod["topologySpreadConstraints"][0];
        assert_eq!(spread["topologyKey"], "topology.kubernetes.io/zone");
        assert_eq!(
            spread["labelSelector"]["matchLabels"]["app.kubernetes.io/component"],
            component,
            "{}",
            at("spread selector")
        );
        assert_eq!(
            pod["priorityClassName"],
            "photos-high",
            "{}",
            at("priorityClassName")
        );
        let meta = &template["metadata"];
        assert_eq!(
            meta["annotations"]["example.com/team"],
            "photos",
            "{}",
            at("podAnnotations")
        );
        assert!(
            meta["annotations"]["checksum/config"].is_string(),
            "{}",
            at("checksum/config")
        );
        assert!(
            meta["annotations"]["checksum/secret"].is_string(),
            "{}",
            at("checksum/secret")
        );
        assert_eq!(
            meta["labels"]["example.com/tier"],
            "web",
            "{}",
            at("podLabels")
        );
        assert_eq!(
            env(c, "RUST_BACKTRACE").unwrap()["value"],
            "1",
            "{}",
            at("extraEnv")
        );
        let env_from: Vec<&Value> = c["envFrom"].as_array().unwrap().iter().collect();
        assert!(env_from
            .iter()
            .any(|e| e["configMapRef"]["name"] == "photos-extra"));
        assert!(env_from
            .iter()
            .any(|e| e["configMapRef"]["name"] == "lightbox-config"));
        assert!(pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "ca"));
        assert!(c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["mountPath"] == "/etc/ssl/corporate"));
        assert_eq!(
            pod["securityContext"]["runAsUser"],
            10001,
            "{}",
            at("podSecurityContext")
        );
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert_eq!(
            c["securityContext"]["runAsUser"],
            10001,
            "{}",
            at("securityContext")
        );
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        let pull: Vec<&str> = pod["imagePullSecrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            pull,
            ["global-regcred", "regcred"],
            "{}",
            at("imagePullSecrets")
        );
        assert!(c["image"]
            .as_str()
            .unwrap()
            .starts_with("mirror.example.com/"));
        let pdb = named(
            &docs,
            "PodDisruptionBudget",
            &format!("lightbox-{component}"),
        );
        assert_eq!(pdb["spec"]["minAvailable"], "50%", "{}", at("pdb"));
    }
    let hpa = named(&docs, "HorizontalPodAutoscaler", "lightbox-api");
    assert_eq!(hpa["spec"]["minReplicas"], 3);
    assert_eq!(
        hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        300
    );
    assert!(
        deployment(&docs, "api")["spec"]["replicas"].is_null(),
        "the HPA owns replicas"
    );
    let api = &deployment(&docs, "api")["spec"]["template"]["spec"]["containers"][0];
    assert!(
        api["lifecycle"]["preStop"]["sleep"]["seconds"]
            .as_i64()
            .unwrap()
            > 0
    );
}

#[test]
fn disruption_budgets_never_block_a_drain() {
    for (values, docs) in all() {
        for pdb in of_kind(&docs, "PodDisruptionBudget") {
            let component = pdb["metadata"]["labels"]["app.kubernetes.io/component"]
                .as_str()
                .unwrap();
            let d = deployment(&docs, component);
            let fewest = d["spec"]["replicas"].as_i64().unwrap_or_else(|| {
                of_kind(&docs, "HorizontalPodAutoscaler")
                    .iter()
                    .chain(of_kind(&docs, "ScaledObject").iter())
                    .find(|h| h["metadata"]["name"] == d["metadata"]["name"])
                    .map(|h| {
                        h["spec"]["minReplicas"]
                            .as_i64()
                            .or(h["spec"]["minReplicaCount"].as_i64())
                            .unwrap()
                    })
                    .unwrap()
            });
            assert!(
                fewest >= 2,
                "{values}: a PDB over {fewest} {component} pod(s)"
            );
            if let Some(min) = pdb["spec"]["minAvailable"].as_i64() {
                assert!(min < fewest, "{values}: {component} minAvailable {min}");
            }
        }
    }
    let irsa = rendered("irsa");
    assert!(of_kind(&irsa, "PodDisruptionBudget")
        .iter()
        .all(|p| p["metadata"]["name"] != "lightbox-controller"));
}

#[test]
fn gitops_renders_generate_nothing_and_the_admin_comes_from_a_secret() {
    let docs = rendered("gitops");
    assert!(
        of_kind(&docs, "Secret").is_empty(),
        "a GitOps render makes no Secret"
    );
    let api = &deployment(&docs, "api")["spec"]["template"]["spec"]["containers"][0];
    let from = |name: &str| env(api, name).unwrap()["valueFrom"]["secretKeyRef"].clone();
    assert_eq!(from("LIGHTBOX_SIGNING_KEY")["name"], "lightbox-credentials");
    assert_eq!(from("LIGHTBOX_ADMIN_EMAIL")["name"], "lightbox-admin");
    assert_eq!(from("LIGHTBOX_ADMIN_EMAIL")["key"], "admin-email");
    assert_eq!(from("LIGHTBOX_ADMIN_PASSWORD")["key"], "admin-password");
    assert_eq!(from("AWS_ACCESS_KEY_ID")["name"], "lightbox-s3");
    assert!(env(api, "LIGHTBOX_ADMIN_EMAIL").is_some());
    let default = rendered("default");
    let api = &deployment(&default, "api")["spec"]["template"]["spec"]["containers"][0];
    assert!(env(api, "LIGHTBOX_ADMIN_EMAIL").is_none());
}

#[test]
fn the_crds_are_generated_templates_kept_on_uninstall() {
    let dir = root().join("charts/lightbox/files/crds");
    let generated = lightbox_controller::resources::crds_yaml();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = generated.iter().map(|(f, _)| f.clone()).collect();
    expected.sort();
    assert_eq!(names, expected);
    for name in &names {
        let chart = std::fs::read_to_string(dir.join(name)).unwrap();
        let crds = std::fs::read_to_string(root().join("crds").join(name)).unwrap();
        assert_eq!(
            chart, crds,
            "charts/lightbox/files/crds/{name} differs from crds/{name}"
        );
    }
    let kept = rendered("crds-kept");
    let templated = of_kind(&kept, "CustomResourceDefinition");
    assert_eq!(templated.len(), 3);
    for crd in templated {
        assert_eq!(
            crd["metadata"]["annotations"]["helm.sh/resource-policy"],
            "keep"
        );
        let (_, yaml) = generated
            .iter()
            .find(|(f, _)| *f == format!("{}.yaml", crd["metadata"]["name"].as_str().unwrap()))
            .unwrap();
        let want: Value = serde_saphyr::from_str(yaml).unwrap();
        assert_eq!(
            normalized(&crd["spec"]),
            normalized(&want["spec"]),
            "the templated CRD is the generated one"
        );
    }
    // A release that brings the CRDs cannot create CropPresets in the same go.
    let first = rendered("first-install");
    assert_eq!(of_kind(&first, "CustomResourceDefinition").len(), 3);
    assert!(of_kind(&first, "CropPreset").is_empty());
}

/// Helm's fromYaml/toYaml turns 15000.0 into 15000: compare numbers as f64.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalized(v))).collect())
        }
        other => other.clone(),
    }
}

#[test]
fn helm_test_and_aggregated_roles_are_there() {
    let docs = rendered("default");
    let test = named(&docs, "Pod", "lightbox-test");
    assert_eq!(test["metadata"]["annotations"]["helm.sh/hook"], "test");
    let args = strs(&test["spec"]["containers"][0]["command"]).join(" ");
    assert!(
        args.contains("/healthz") && args.contains("/readyz"),
        "{args}"
    );
    let view = named(&docs, "ClusterRole", "lightbox-lightbox-view");
    assert_eq!(
        view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"],
        "true"
    );
    let edit = named(&docs, "ClusterRole", "lightbox-lightbox-edit");
    assert_eq!(
        edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"],
        "true"
    );
    let hook = named(&docs, "Job", "lightbox-uninstall");
    assert_eq!(
        hook["metadata"]["annotations"]["helm.sh/hook"],
        "pre-delete"
    );
}

#[test]
fn installed_crop_presets_are_valid_presets() {
    for (values, docs) in all() {
        let presets = of_kind(&docs, "CropPreset");
        assert!(!presets.is_empty(), "{values}: no CropPreset installed");
        for p in presets {
            let spec: lightbox_controller::resources::CropPresetSpec =
                serde_json::from_value(p["spec"].clone()).unwrap();
            let core: lightbox_core::domain::crop::CropSpec = (&spec).into();
            core.validate()
                .unwrap_or_else(|e| panic!("{values}: {p}: {e:?}"));
        }
    }
}
