//! The authorization matrix, generated from the one method table
//! (`lightbox_api::rpc::methods::METHODS`), so a new method cannot be added
//! without being checked here: every non-public method is called with no
//! token, a malformed token, an expired JWT, a revoked PAT, a read-only PAT,
//! a read-write PAT and a non-admin JWT, and answers the documented code
//! (1001 unauthenticated, 1003 forbidden). Nothing the owner has changes.

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lightbox_api::rpc::methods::{Access, METHODS};
use lightbox_e2e::{Server, SIGNING_KEY};
use serde_json::{json, Value};

fn expired(token: &str) -> String {
    let mut v = Validation::new(Algorithm::HS256);
    v.validate_exp = false;
    v.required_spec_claims.clear();
    let key = DecodingKey::from_secret(SIGNING_KEY.as_bytes());
    let mut claims = decode::<Value>(token, &key, &v).unwrap().claims;
    claims["exp"] = json!(chrono::Utc::now().timestamp() - 120);
    let enc = EncodingKey::from_secret(SIGNING_KEY.as_bytes());
    encode(&Header::new(Algorithm::HS256), &claims, &enc).unwrap()
}

/// What the owner can see of their own account, to prove nothing changed;
/// a token's `last_used_at` moves when the valid PATs are used, by design.
async fn digest(srv: &Server, jwt: &str) -> Value {
    let mut out = serde_json::Map::new();
    for method in ["account.me", "image.list", "album.list", "token.list"] {
        let mut got = srv.ok(Some(jwt), method, json!({})).await;
        if let Some(items) = got["items"].as_array_mut() {
            for item in items {
                if let Some(o) = item.as_object_mut() {
                    o.remove("last_used_at");
                }
            }
        }
        out.insert(method.into(), got);
    }
    Value::Object(out)
}

async fn pat(srv: &Server, jwt: &str, name: &str, scopes: &[&str]) -> (String, Value) {
    let made = srv
        .ok(
            Some(jwt),
            "token.create",
            json!({"name": name, "scopes": scopes}),
        )
        .await;
    (
        made["token"].as_str().unwrap().to_owned(),
        made["id"].clone(),
    )
}

#[tokio::test]
async fn every_method_refuses_every_wrong_credential_and_changes_nothing() {
    let srv = Server::start();
    let jwt = srv.user("owner@example.com", "owner-password-1").await;
    srv.photo(&jwt, 640, 480, "kept").await;
    let (read_only, _) = pat(&srv, &jwt, "ro", &["read"]).await;
    let (read_write, _) = pat(&srv, &jwt, "rw", &["read", "write"]).await;
    let (revoked, revoked_id) = pat(&srv, &jwt, "gone", &["read", "write"]).await;
    srv.ok(Some(&jwt), "token.revoke", json!({"id": revoked_id}))
        .await;
    let stale = expired(&jwt);
    let before = digest(&srv, &jwt).await;

    let mut checked = 0;
    for m in METHODS.iter().filter(|m| m.access != Access::Public) {
        // The error's code, and its data.reason / data.required.
        let why = |token: Option<String>| {
            let srv = &srv;
            async move {
                let r = srv.call(token.as_deref(), m.name, json!({})).await;
                let e = &r["error"];
                let text = |k: &str| e["data"][k].as_str().unwrap_or("").to_owned();
                (e["code"].as_i64(), text("reason"), text("required"))
            }
        };
        let code = |token: Option<String>| {
            let why = &why;
            async move { why(token).await.0 }
        };
        for (what, token, reason) in [
            ("no token", None, "missing"),
            (
                "a malformed token",
                Some("not-a-token".to_owned()),
                "malformed",
            ),
            (
                "a bearer of the wrong shape",
                Some("lbx_pat_".to_owned() + &"x".repeat(40)),
                "malformed",
            ),
            ("an expired JWT", Some(stale.clone()), "expired"),
            ("a revoked PAT", Some(revoked.clone()), "revoked"),
        ] {
            let (code, got, _) = why(token).await;
            assert_eq!(code, Some(1001), "{} with {what}", m.name);
            assert_eq!(got, reason, "{} with {what}: data.reason", m.name);
        }
        let (ro, ro_reason, ro_required) = why(Some(read_only.clone())).await;
        let rw = code(Some(read_write.clone())).await;
        if ro == Some(1003) {
            let needs = match m.access {
                Access::Write => "write",
                _ => "session",
            };
            assert_eq!(
                (ro_reason.as_str(), ro_required.as_str()),
                ("scope", needs),
                "{} with a read-only PAT: data",
                m.name
            );
        }
        match m.access {
            Access::Read => {
                assert!(
                    !matches!(ro, Some(1001 | 1003)),
                    "{} refused a read PAT: {ro:?}",
                    m.name
                );
            }
            Access::Write => {
                assert_eq!(ro, Some(1003), "{} with a read-only PAT", m.name);
                assert!(
                    !matches!(rw, Some(1001 | 1003)),
                    "{} refused a write PAT: {rw:?}",
                    m.name
                );
            }
            Access::Session | Access::Admin => {
                assert_eq!(ro, Some(1003), "{} with a read-only PAT", m.name);
                assert_eq!(
                    rw,
                    Some(1003),
                    "{} is JWT-only, a PAT must not pass",
                    m.name
                );
            }
            Access::Public => unreachable!(),
        }
        if m.access == Access::Admin {
            assert_eq!(
                why(Some(jwt.clone())).await,
                (Some(1003), "role".into(), "admin".into()),
                "{} with a non-admin JWT",
                m.name
            );
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} methods in the table?");
    assert_eq!(
        digest(&srv, &jwt).await,
        before,
        "a refused call changed something"
    );
}

#[tokio::test]
async fn the_upload_route_refuses_wrong_credentials() {
    let srv = Server::start();
    let jwt = srv
        .user("uploader@example.com", "uploader-password-1")
        .await;
    let (read_only, _) = pat(&srv, &jwt, "ro", &["read"]).await;
    let (revoked, revoked_id) = pat(&srv, &jwt, "gone", &["read", "write"]).await;
    srv.ok(Some(&jwt), "token.revoke", json!({"id": revoked_id}))
        .await;
    let bytes = lightbox_e2e::synthetic_jpeg(300, 200, 1);
    for (token, status, code, reason) in [
        (None, 401, 1001, "missing"),
        (Some("not-a-token".to_owned()), 401, 1001, "malformed"),
        (Some(expired(&jwt)), 401, 1001, "expired"),
        (Some(revoked), 401, 1001, "revoked"),
        (Some(read_only), 403, 1003, "scope"),
    ] {
        let (got, body) = srv
            .upload(token.as_deref(), bytes.clone(), "a.jpg", "image/jpeg", None)
            .await;
        assert_eq!(
            (got, body["error"]["code"].as_i64()),
            (status, Some(code)),
            "{body}"
        );
        assert_eq!(body["error"]["data"]["reason"], reason, "{body}");
    }
    let list = srv.ok(Some(&jwt), "image.list", json!({})).await;
    assert_eq!(
        list["items"],
        json!([]),
        "a refused upload stored something"
    );
}
