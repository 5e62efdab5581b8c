//! The CRDs in `crds/` and the chart's `files/crds/` are what the types
//! generate, and the examples in `crds/examples/` pass the generated schema
//! (structure and CEL rules) while broken variants of them do not.

use kube::core::cel::Validator;
use lightbox_controller::resources::crds_yaml;
use serde_json::Value;
use std::path::PathBuf;

fn crds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crds")
}

/// `crds/` and the chart's copy, which templates/crds.yaml installs.
fn crd_dirs() -> [PathBuf; 2] {
    [crds_dir(), crds_dir().join("../charts/lightbox/files/crds")]
}

#[test]
fn crds_folder_matches_the_types() {
    if std::env::var_os("LIGHTBOX_WRITE_CRDS").is_some() {
        for dir in crd_dirs() {
            for (file, yaml) in crds_yaml() {
                std::fs::write(dir.join(file), yaml).unwrap();
            }
        }
    }
    for dir in crd_dirs() {
        for (file, yaml) in crds_yaml() {
            let path = dir.join(&file);
            let stored = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                stored,
                yaml,
                "{} drifted from the types: regenerate with LIGHTBOX_WRITE_CRDS=1 cargo test -p lightbox-controller --test crds",
                path.display()
            );
        }
    }
}

/// The openAPIV3Schema of the CRD that serves `kind`.
fn schema(kind: &str) -> Value {
    for (_, yaml) in crds_yaml() {
        let crd: Value = serde_saphyr::from_str(&yaml).unwrap();
        if crd["spec"]["names"]["kind"] == kind {
            return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
        }
    }
    panic!("no CRD for {kind}")
}

/// The API server's two checks, as far as they can be run without one:
/// the structural schema, then the CEL rules.
fn admitted(object: &Value) -> Result<(), String> {
    let kind = object["kind"].as_str().ok_or("no kind")?;
    let schema = schema(kind);
    let validator = jsonschema::draft4::new(&schema).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(object)
        .map(|e| e.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Validator::new()
        .validate(&schema, object, None)
        .map_err(|e| format!("{e:?}"))
}

fn examples() -> Vec<(String, Value)> {
    let dir = crds_dir().join("examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        out.push((
            path.display().to_string(),
            serde_saphyr::from_str(&text).unwrap(),
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_example_is_admitted_and_there_is_one_per_kind() {
    let examples = examples();
    let mut kinds: Vec<String> = examples
        .iter()
        .map(|(_, v)| v["kind"].as_str().unwrap().to_owned())
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["AliasLimit", "CropPreset", "RenderQuota"]);
    for (path, example) in &examples {
        assert_eq!(example["apiVersion"], "lightbox.dev/v1", "{path}");
        admitted(example).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

fn example(kind: &str) -> Value {
    examples()
        .into_iter()
        .map(|(_, v)| v)
        .find(|v| v["kind"] == kind)
        .unwrap()
}

#[test]
fn a_bad_crop_preset_is_refused_by_the_schema() {
    let cases: [(&str, Value); 8] = [
        ("code", Value::from("Bad_Code")),
        ("width", Value::from(15001)),
        ("height", Value::from(-1)),
        ("quality", Value::from(0)),
        ("quality", Value::from(101)),
        ("mode", Value::from("stretch")),
        ("focus", Value::from("middle")),
        ("format", Value::from("heic")),
    ];
    for (field, value) in cases {
        let mut p = example("CropPreset");
        p["spec"][field] = value.clone();
        assert!(admitted(&p).is_err(), "{field} = {value} was admitted");
    }
    let mut zero = example("CropPreset");
    zero["spec"]["width"] = 0.into();
    zero["spec"]["height"] = 0.into();
    let refused = admitted(&zero).expect_err("a 0x0 preset was admitted");
    assert!(
        refused.contains("at least one of width and height"),
        "{refused}"
    );
    let mut one_side = example("CropPreset");
    one_side["spec"]["width"] = 0.into();
    one_side["spec"]["height"] = 500.into();
    admitted(&one_side).unwrap();
    let mut avif = example("CropPreset");
    avif["spec"]["format"] = "avif".into();
    avif["spec"]["focus"] = "top".into();
    admitted(&avif).unwrap();
}

#[test]
fn bad_quotas_and_limits_are_refused() {
    let mut q = example("RenderQuota");
    q["spec"]["maxPixels"] = 0.into();
    assert!(admitted(&q).is_err());
    let mut q = example("RenderQuota");
    q["spec"]
        .as_object_mut()
        .unwrap()
        .remove("maxPendingPerOwner");
    assert!(admitted(&q).is_err(), "a quota without maxPendingPerOwner");
    let mut a = example("AliasLimit");
    a["spec"]["overrides"] = serde_json::json!([{ "email": "not-an-email", "limit": 3 }]);
    assert!(admitted(&a).is_err());
}
