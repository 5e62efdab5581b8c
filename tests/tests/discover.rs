//! `rpc.discover`: the OpenRPC document, served by a running server, covers
//! every method of the table with its params, result, errors and access,
//! and names at least the errors the contract lists for each method.
//! (scripts/api_doc.py validates it against OpenRPC's meta-schema.)

use lightbox_api::rpc::methods::{Access, METHODS};
use lightbox_e2e::Server;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The error codes `../shared/spec/interface.md` lists per method.
fn contract_errors() -> BTreeMap<String, BTreeSet<i64>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/spec/interface.md"
    );
    let text = std::fs::read_to_string(path).expect("the interface beside the checkout");
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(name) = cells.get(1).and_then(|c| c.split('`').nth(1)) else {
            continue;
        };
        let last = cells.iter().rev().find(|c| !c.is_empty()).unwrap_or(&"");
        let codes: BTreeSet<i64> = last
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        if name.contains('.') && !codes.is_empty() {
            out.insert(name.to_owned(), codes);
        }
    }
    out
}

/// The error codes a method object of the document names.
fn codes_of(method: &Value) -> BTreeSet<i64> {
    method["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn the_document_describes_every_method_as_the_server_runs_it() {
    let srv = Server::start();
    let doc = srv.ok(None, "rpc.discover", json!({})).await;
    assert_eq!(doc["openrpc"], "1.3.2");
    let expected = lightbox_api::rpc::discover::document(&format!("{}/rpc", srv.url));
    // Compared whole but reported short: the document runs to 60 kB.
    assert!(
        doc == expected,
        "the served document is not the one the method table generates"
    );
    let methods: BTreeMap<&str, &Value> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m))
        .collect();
    // The table's methods and rpc.discover itself, built into the dispatcher.
    assert_eq!(methods.len(), METHODS.len() + 1);
    assert_eq!(methods["rpc.discover"]["x-access"], "public");
    for m in METHODS {
        let d = methods
            .get(m.name)
            .unwrap_or_else(|| panic!("{} missing", m.name));
        let pat = matches!(m.access, Access::Read | Access::Write);
        assert_eq!(d["x-pat"], pat, "{}", m.name);
        let codes = codes_of(d);
        if m.access != Access::Public {
            assert!(codes.contains(&1001), "{}: {codes:?}", m.name);
        }
        assert!(d["result"]["schema"].is_object(), "{}", m.name);
    }
    let contract = contract_errors();
    assert!(contract.len() >= 20, "parsed only {contract:?}");
    for (name, listed) in &contract {
        let d = methods
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{name} missing"));
        let codes = codes_of(d);
        assert!(
            listed.is_subset(&codes),
            "{name}: the contract lists {listed:?}, the document {codes:?}"
        );
    }
    // What a newcomer looks up: setMode's params, with its enum.
    let set_mode = methods["album.sharing.setMode"];
    let params: BTreeMap<&str, &Value> = set_mode["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p))
        .collect();
    assert_eq!(params["album_id"]["required"], true);
    assert_eq!(params["mode"]["required"], true);
    let mode = params["mode"]["schema"]["$ref"]
        .as_str()
        .expect("a named enum");
    let name = mode.rsplit('/').next().unwrap();
    let modes = &doc["components"]["schemas"][name]["enum"];
    for m in ["private", "unlisted", "public"] {
        assert!(modes.as_array().unwrap().contains(&json!(m)), "{modes}");
    }
    // Limits reach the document: a folder name is 1-200 characters.
    let create = methods["album.create"]["params"].as_array().unwrap();
    let name = create.iter().find(|p| p["name"] == "name").unwrap();
    assert_eq!(
        (&name["schema"]["minLength"], &name["schema"]["maxLength"]),
        (&json!(1), &json!(200)),
        "{name}"
    );
}

/// A batch of 20 `rpc.discover` turned 1.1 KB into 972 KB for anyone
/// (issue 54, item 8): the document is answered once per batch, the
/// further ones get -32600 in their place.
#[tokio::test]
async fn a_batch_of_discover_calls_gets_one_document() {
    let srv = Server::start();
    let one = json!([{"jsonrpc": "2.0", "id": 0, "method": "rpc.discover"}]);
    let batch: Vec<Value> = (0..20)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "rpc.discover"}))
        .collect();
    let srv = &srv;
    let post = |body: Value| async move {
        let r = srv
            .http()
            .post(format!("{}/rpc", srv.url))
            .json(&body)
            .send()
            .await;
        let r = r.expect("rpc");
        assert_eq!(r.status(), 200);
        r.text().await.expect("body")
    };
    let single = post(one).await;
    let sent = serde_json::to_vec(&batch).unwrap().len();
    let text = post(Value::Array(batch)).await;
    assert!(
        text.len() < single.len() + 20 * 200,
        "{sent} bytes asked for {} bytes back; one document is {}",
        text.len(),
        single.len()
    );
    let answers: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(answers.len(), 20, "every call answered, in order");
    assert_eq!(answers[0]["result"]["openrpc"], "1.3.2");
    for (n, a) in answers.iter().enumerate().skip(1) {
        assert_eq!(a["id"], n, "{a}");
        assert_eq!(a["error"]["code"], -32600, "{a}");
    }
    // In another batch, beside other calls, it is answered again.
    let mixed = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "rpc.discover"},
        {"jsonrpc": "2.0", "id": "b", "method": "no.such"},
    ]);
    let answers: Vec<Value> = serde_json::from_str(&post(mixed).await).unwrap();
    assert_eq!(answers[0]["result"]["openrpc"], "1.3.2");
    assert_eq!(answers[1]["error"]["code"], -32601);
}
