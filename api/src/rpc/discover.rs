//! `rpc.discover`: the OpenRPC document of the API, generated from the
//! method table and the params and result types (their JSON Schemas come
//! from schemars), so it cannot drift from what the server accepts.
//! `docs/api.md` is generated from the same document
//! (`scripts/api_doc.py`), and `lightbox-api openrpc` prints it.

use super::methods::{Access, METHODS};
use super::schemas::Schemas;
use lightbox_core::domain::error::message_of;
use schemars::Schema;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// The method's name. It is built into the dispatcher rather than the
/// method table, which it describes.
pub const NAME: &str = "rpc.discover";

/// `rpc.discover` itself, as the document lists it.
fn itself() -> Value {
    json!({
        "name": NAME,
        "summary": "This document.",
        "paramStructure": "by-name",
        "params": [],
        "result": {
            "name": "result",
            "schema": {
                "type": "object",
                "description": "An OpenRPC 1.3 document: https://spec.open-rpc.org/",
            },
        },
        "errors": [
            { "code": 2002, "message": "validation_failed" },
            { "code": -32603, "message": "internal_error" },
        ],
        "x-access": "public",
        "x-pat": false,
    })
}

/// The error codes every method of an access level may answer, beside
/// those the method table names for the method itself.
fn common_errors(access: Access, has_params: bool) -> Vec<i64> {
    let mut codes = match access {
        Access::Public => vec![],
        Access::Read => vec![1001],
        Access::Write | Access::Session | Access::Admin => vec![1001, 1003],
    };
    if has_params {
        codes.push(2002);
    }
    codes.extend([5001, -32603]);
    codes
}

fn access_name(a: Access) -> &'static str {
    match a {
        Access::Public => "public",
        Access::Read => "read",
        Access::Write => "write",
        Access::Session => "session",
        Access::Admin => "admin",
    }
}

/// One content descriptor per property of the params object.
fn params_of(schema: &Schema) -> Vec<Value> {
    let obj = schema.as_object().cloned().unwrap_or_default();
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = obj
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    props
        .into_iter()
        .map(|(name, mut schema)| {
            let description = schema.as_object_mut().and_then(|o| o.remove("description"));
            let mut d = json!({
                "name": name,
                "required": required.contains(&name.as_str()),
                "schema": schema,
            });
            if let Some(text) = description {
                d["description"] = text;
            }
            d
        })
        .collect()
}

fn method_object(m: &super::methods::Method, s: &mut Schemas) -> Value {
    let (params, result) = (m.describe)(s);
    let params = params_of(&params);
    let mut codes = common_errors(m.access, !params.is_empty());
    codes.extend(m.errors);
    codes.sort_unstable_by_key(|c| (*c < 0, *c));
    codes.dedup();
    let errors: Vec<Value> = codes
        .iter()
        .map(|c| json!({ "code": c, "message": message_of(*c) }))
        .collect();
    json!({
        "name": m.name,
        "paramStructure": "by-name",
        "params": params,
        "result": { "name": "result", "schema": result },
        "errors": errors,
        "x-access": access_name(m.access),
        "x-pat": matches!(m.access, Access::Read | Access::Write),
    })
}

/// The whole document; `rpc_url` is where `POST` calls go.
pub fn document(rpc_url: &str) -> Value {
    let mut s = Schemas::default();
    let mut methods = vec![itself()];
    methods.extend(METHODS.iter().map(|m| method_object(m, &mut s)));
    let mut schemas = Map::new();
    for generator in s.generators() {
        for (name, schema) in generator.take_definitions(true) {
            // A type read and written alike has one schema; if the two
            // contracts ever differ, the test of this module says so.
            schemas.entry(name).or_insert(schema);
        }
    }
    json!({
        "openrpc": "1.3.2",
        "info": {
            "title": "Lightbox",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "JSON-RPC 2.0 over POST /rpc (or POST /rpc/{method} with the same \
                request object). Params by name. x-access says who may call a method \
                (public, read, write, session: a JWT session only, admin); x-pat whether \
                a personal access token may. Errors carry code, message and data; 1001 \
                has data.reason; a 1003 for a missing scope or role has data.reason and data.required.",
        },
        "servers": [{ "name": "lightbox", "url": rpc_url }],
        "methods": methods,
        "components": { "schemas": schemas },
    })
}

/// The document `rpc.discover` answers, made once per process.
pub fn served(base_url: &str) -> Box<RawValue> {
    static DOC: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    DOC.get_or_init(|| {
        let doc = document(&lightbox_core::domain::urls::absolute(base_url, "/rpc"));
        serde_json::value::to_raw_value(&doc).expect("a Value always serializes")
    })
    .clone()
}
