//! JSON-RPC 2.0 transport over real HTTP: ../shared/spec/interface.md 4.1, 7, 8 and
//! ../shared/spec/decisions.md "JSON-RPC details".

use lightbox_e2e::{Server, ADMIN_EMAIL, ADMIN_PASSWORD};
use serde_json::{json, Value};

fn req(id: Value, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[tokio::test]
async fn malformed_bodies_are_http_400_with_the_right_code() {
    let s = Server::start();
    let cases = [
        ("{not json", -32700),
        ("[{\"jsonrpc\":\"2.0\",", -32700),
        ("42", -32600),
        ("\"auth.login\"", -32600),
        ("[]", -32600),
        (r#"{"jsonrpc":"1.0","id":1,"method":"account.me"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"account.me"}"#,
            -32600,
        ),
    ];
    for (body, code) in cases {
        let (status, text) = s.post_raw("/rpc", "application/json", body).await;
        assert_eq!(status, 400, "{body}");
        let v = parse(&text);
        assert_eq!(v["error"]["code"], code, "{body}");
        assert_eq!(v["id"], Value::Null, "{body}");
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

#[tokio::test]
async fn a_batch_over_twenty_is_refused_and_twenty_is_answered_in_order() {
    let s = Server::start();
    let ids: Vec<Value> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                json!(i)
            } else {
                json!(format!("id-{i}"))
            }
        })
        .collect();
    let batch: Vec<Value> = ids
        .iter()
        .map(|id| req(id.clone(), "no.such.method"))
        .collect();
    let (status, text) = s
        .post_raw(
            "/rpc",
            "application/json",
            Value::from(batch.clone()).to_string(),
        )
        .await;
    assert_eq!(status, 200);
    let answers = parse(&text);
    let answers = answers.as_array().expect("array");
    assert_eq!(answers.len(), 20);
    for (a, id) in answers.iter().zip(&ids) {
        assert_eq!(&a["id"], id);
        assert_eq!(a["error"]["code"], -32601);
    }

    let mut over = batch;
    over.push(req(json!(21), "no.such.method"));
    let (status, text) = s
        .post_raw("/rpc", "application/json", Value::from(over).to_string())
        .await;
    assert_eq!(status, 400);
    assert_eq!(parse(&text)["error"]["code"], -32600);
}

#[tokio::test]
async fn notifications_get_no_answer() {
    let s = Server::start();
    let note = json!({"jsonrpc": "2.0", "method": "auth.login", "params": {"email": "x@y.io", "password": "p"}});
    let (status, text) = s
        .post_raw("/rpc", "application/json", note.to_string())
        .await;
    assert_eq!((status, text.as_str()), (204, ""));
    let only_notes = json!([note, {"jsonrpc": "2.0", "method": "no.such"}]);
    let (status, text) = s
        .post_raw("/rpc", "application/json", only_notes.to_string())
        .await;
    assert_eq!((status, text.as_str()), (204, ""));

    // A mixed batch answers only the calls with an id, and an invalid element
    // gets its own -32600 entry.
    let mixed = json!([
        note,
        req(json!("keep"), "no.such"),
        7,
        req(Value::Null, "no.such")
    ]);
    let (status, text) = s
        .post_raw("/rpc", "application/json", mixed.to_string())
        .await;
    assert_eq!(status, 200);
    let v = parse(&text);
    let v = v.as_array().unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        (v[0]["id"].clone(), v[0]["error"]["code"].clone()),
        (json!("keep"), json!(-32601))
    );
    assert_eq!(
        (v[1]["id"].clone(), v[1]["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    assert_eq!(
        (v[2]["id"].clone(), v[2]["error"]["code"].clone()),
        (Value::Null, json!(-32601))
    );
}

#[tokio::test]
async fn unknown_methods_are_http_200_with_minus_32601_and_the_id_echoed() {
    let s = Server::start();
    let (status, text) = s
        .post_raw(
            "/rpc",
            "application/json",
            req(json!("abc"), "nope").to_string(),
        )
        .await;
    assert_eq!(status, 200);
    let v = parse(&text);
    assert_eq!(v["id"], "abc");
    assert_eq!(v["error"]["code"], -32601);
}

#[tokio::test]
async fn the_single_method_route_takes_one_call_and_refuses_batches() {
    let s = Server::start();
    let login = json!({"jsonrpc": "2.0", "id": 9, "method": "auth.login",
                       "params": {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}});
    let (status, text) = s
        .post_raw("/rpc/auth.login", "application/json", login.to_string())
        .await;
    assert_eq!(status, 200, "{text}");
    let v = parse(&text);
    assert_eq!(v["id"], 9);
    assert!(v["result"]["access_token"].is_string());

    let batch = json!([login]);
    let (status, text) = s
        .post_raw("/rpc/auth.login", "application/json", batch.to_string())
        .await;
    assert_eq!(status, 400);
    assert_eq!(parse(&text)["error"]["code"], -32600);

    let (status, _) = s
        .post_raw("/rpc/account.me", "application/json", login.to_string())
        .await;
    assert_eq!(
        status, 400,
        "a body naming another method than the path is refused"
    );
}

#[tokio::test]
async fn body_limits_and_content_type() {
    let s = Server::start();
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"auth.login","params":{{"email":"{}","password":"x"}}}}"#,
        "a".repeat(1 << 20)
    );
    let (status, text) = s.post_raw("/rpc", "application/json", big).await;
    assert_eq!(status, 413);
    assert_eq!(parse(&text)["error"]["code"], -32600);

    // Just under the limit is read and answered (here: no such refresh token).
    let fits = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"auth.refresh","params":{{"refresh_token":"{}"}}}}"#,
        "a".repeat((1 << 20) - 200)
    );
    let (status, text) = s.post_raw("/rpc", "application/json", fits).await;
    assert_eq!(status, 200);
    assert_eq!(parse(&text)["error"]["code"], 1001);

    let (status, _) = s
        .post_raw(
            "/rpc",
            "text/plain",
            req(json!(1), "account.me").to_string(),
        )
        .await;
    assert_eq!(status, 415);
}

#[tokio::test]
async fn bad_params_are_2002_naming_the_field() {
    let s = Server::start();
    let cases = [
        (json!({"password": "x"}), "email"),
        (json!({"email": 5, "password": "x"}), "email"),
        (
            json!({"email": "a@b.io", "password": "x", "extra": true}),
            "extra",
        ),
        (json!(["a@b.io", "x"]), "params"),
        (json!({"email": "", "password": "x"}), "email"),
        (
            json!({"email": format!("{}@x.io", "a".repeat(300)), "password": "x"}),
            "email",
        ),
        (
            json!({"email": "a@b.io", "password": "x".repeat(257)}),
            "password",
        ),
    ];
    for (params, field) in cases {
        let e = s.fail(None, "auth.login", params.clone()).await;
        assert_eq!(e["code"], 2002, "{params}");
        assert_eq!(e["message"], "validation_failed");
        assert_eq!(e["data"]["errors"][0]["field"], field, "{params}: {e}");
    }
}
