//! Accounts and tokens over real HTTP: ../shared/spec/interface.md 5 and ../shared/spec/decisions.md
//! "Accounts and tokens".

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lightbox_e2e::{eventually, Server, ADMIN_EMAIL, ADMIN_PASSWORD, SIGNING_KEY};
use serde_json::{json, Value};
use std::time::Duration;

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_owned()
}

fn claims(token: &str) -> Value {
    let mut v = Validation::new(Algorithm::HS256);
    v.validate_exp = false;
    v.required_spec_claims.clear();
    decode::<Value>(token, &DecodingKey::from_secret(SIGNING_KEY.as_bytes()), &v)
        .expect("decodes with the server's key")
        .claims
}

fn sign(claims: &Value) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(SIGNING_KEY.as_bytes()),
    )
    .unwrap()
}

#[tokio::test]
async fn login_returns_a_15_minute_pair_and_me_works() {
    let srv = Server::start();
    let before = chrono::Utc::now();
    let pair = srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let expires = chrono::DateTime::parse_from_rfc3339(&s(&pair["access_expires_at"])).unwrap();
    let ttl = expires.signed_duration_since(before).num_seconds();
    assert!((14 * 60..=15 * 60 + 5).contains(&ttl), "ttl {ttl}s");
    assert_eq!(pair["user"]["email"], ADMIN_EMAIL);
    assert_eq!(pair["user"]["is_admin"], true);
    assert!(s(&pair["refresh_token"]).len() > 30);

    let me = srv
        .ok(Some(&s(&pair["access_token"])), "account.me", json!({}))
        .await;
    assert_eq!(me["user"], pair["user"]);

    assert_eq!(
        srv.code(
            None,
            "auth.login",
            json!({"email": ADMIN_EMAIL, "password": "wrong-password"})
        )
        .await,
        1001
    );
    assert_eq!(
        srv.code(
            None,
            "auth.login",
            json!({"email": "nobody@example.com", "password": "whatever1"})
        )
        .await,
        1001
    );
    // Email is case-insensitive.
    srv.login(&ADMIN_EMAIL.to_uppercase(), ADMIN_PASSWORD).await;
    assert_eq!(srv.code(None, "account.me", json!({})).await, 1001);
}

#[tokio::test]
async fn expired_tampered_and_garbage_jwts_are_refused() {
    let srv = Server::start();
    let token = s(&srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await["access_token"]);
    let mut c = claims(&token);
    let now = chrono::Utc::now().timestamp();

    // Re-signed with the real key and a future expiry it works: so the
    // failures below are due to what was changed, not to re-signing.
    c["exp"] = json!(now + 600);
    srv.ok(Some(&sign(&c)), "account.me", json!({})).await;

    c["exp"] = json!(now - 120);
    assert_eq!(
        srv.code(Some(&sign(&c)), "account.me", json!({})).await,
        1001,
        "expired"
    );

    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let sig = parts[2].clone();
    parts[2] = format!(
        "{}{}",
        &sig[..sig.len() - 2],
        if sig.ends_with("AA") { "BB" } else { "AA" }
    );
    assert_eq!(
        srv.code(Some(&parts.join(".")), "account.me", json!({}))
            .await,
        1001,
        "bad signature"
    );

    let mut other = claims(&token);
    other["sub"] = json!(uuid::Uuid::new_v4());
    let forged_payload = sign(&other).split('.').nth(1).unwrap().to_owned();
    let spliced = format!(
        "{}.{}.{}",
        token.split('.').next().unwrap(),
        forged_payload,
        sig
    );
    assert_eq!(
        srv.code(Some(&spliced), "account.me", json!({})).await,
        1001,
        "payload swapped"
    );

    let unsigned = format!(
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{}.",
        token.split('.').nth(1).unwrap()
    );
    assert_eq!(
        srv.code(Some(&unsigned), "account.me", json!({})).await,
        1001,
        "alg none"
    );
    assert_eq!(
        srv.code(Some("garbage"), "account.me", json!({})).await,
        1001
    );

    // A wrong bearer does not stop a public method.
    srv.ok(
        Some("garbage"),
        "auth.login",
        json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}),
    )
    .await;
}

#[tokio::test]
async fn refresh_rotates_and_a_replay_ends_the_session() {
    let srv = Server::start();
    let first = srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let r1 = s(&first["refresh_token"]);
    let second = srv
        .ok(None, "auth.refresh", json!({"refresh_token": r1}))
        .await;
    let (a2, r2) = (s(&second["access_token"]), s(&second["refresh_token"]));
    assert_ne!(r1, r2);
    assert_eq!(second["user"]["email"], ADMIN_EMAIL);
    srv.ok(Some(&a2), "account.me", json!({})).await;

    // r1 is spent: presenting it again revokes the whole session.
    assert_eq!(
        srv.code(None, "auth.refresh", json!({"refresh_token": r1}))
            .await,
        1001
    );
    assert_eq!(
        srv.code(None, "auth.refresh", json!({"refresh_token": r2}))
            .await,
        1001
    );
    assert_eq!(srv.code(Some(&a2), "account.me", json!({})).await, 1001);
    assert_eq!(
        srv.code(Some(&s(&first["access_token"])), "account.me", json!({}))
            .await,
        1001
    );

    // Other sessions are untouched.
    srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!(
        srv.code(
            None,
            "auth.refresh",
            json!({"refresh_token": "lbx_rt_unknown"})
        )
        .await,
        1001
    );
}

#[tokio::test]
async fn logout_ends_the_session() {
    let srv = Server::start();
    let pair = srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let other = srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let refresh = s(&pair["refresh_token"]);
    assert_eq!(
        srv.ok(None, "auth.logout", json!({"refresh_token": refresh}))
            .await,
        json!({})
    );
    assert_eq!(
        srv.code(Some(&s(&pair["access_token"])), "account.me", json!({}))
            .await,
        1001
    );
    assert_eq!(
        srv.code(None, "auth.refresh", json!({"refresh_token": refresh}))
            .await,
        1001
    );
    srv.ok(Some(&s(&other["access_token"])), "account.me", json!({}))
        .await;
    assert_eq!(
        srv.code(None, "auth.logout", json!({"refresh_token": "lbx_rt_nope"}))
            .await,
        1001
    );
}

#[tokio::test]
async fn personal_access_tokens() {
    let srv = Server::start();
    let jwt = srv.admin_token().await;
    let created = srv
        .ok(Some(&jwt), "token.create", json!({"name": "ci"}))
        .await;
    let pat = s(&created["token"]);
    assert!(pat.starts_with("lbx_pat_"));
    assert_eq!(created["scopes"], json!(["read", "write"]));
    assert_eq!(created["expires_at"], Value::Null);

    let listed = srv.ok(Some(&jwt), "token.list", json!({})).await;
    let item = &listed["items"][0];
    assert_eq!(item["id"], created["id"]);
    assert!(pat.starts_with(&s(&item["prefix"])));
    assert!(item.get("token").is_none());
    assert!(
        !listed.to_string().contains(&pat[12..]),
        "the secret never comes back"
    );

    let me = srv.ok(Some(&pat), "account.me", json!({})).await;
    assert_eq!(me["user"]["email"], ADMIN_EMAIL);
    // last_used_at is recorded on use.
    let listed = srv.ok(Some(&jwt), "token.list", json!({})).await;
    assert!(listed["items"][0]["last_used_at"].is_string());

    // JWT-session-only methods refuse every PAT with 1003.
    for (method, params) in [
        ("token.create", json!({"name": "x"})),
        ("token.list", json!({})),
        ("token.revoke", json!({"id": created["id"]})),
        (
            "account.setEmail",
            json!({"current_password": ADMIN_PASSWORD, "email": "z@z.io"}),
        ),
        (
            "account.setPassword",
            json!({"current_password": ADMIN_PASSWORD, "new_password": "12345678"}),
        ),
        ("admin.user.list", json!({})),
        (
            "admin.user.create",
            json!({"email": "q@q.io", "password": "12345678"}),
        ),
    ] {
        assert_eq!(srv.code(Some(&pat), method, params).await, 1003, "{method}");
    }

    let read_only = srv
        .ok(
            Some(&jwt),
            "token.create",
            json!({"name": "ro", "scopes": ["read"], "expires_in_days": 30}),
        )
        .await;
    assert_eq!(read_only["scopes"], json!(["read"]));
    assert!(read_only["expires_at"].is_string());
    srv.ok(Some(&s(&read_only["token"])), "account.me", json!({}))
        .await;

    for bad in [
        json!({"name": ""}),
        json!({"name": "x".repeat(101)}),
        json!({"name": "x", "scopes": []}),
        json!({"name": "x", "scopes": ["admin"]}),
        json!({"name": "x", "expires_in_days": 0}),
        json!({"name": "x", "expires_in_days": 3651}),
    ] {
        assert_eq!(
            srv.code(Some(&jwt), "token.create", bad.clone()).await,
            2002,
            "{bad}"
        );
    }

    assert_eq!(
        srv.ok(Some(&jwt), "token.revoke", json!({"id": created["id"]}))
            .await,
        json!({})
    );
    assert_eq!(
        srv.code(Some(&pat), "account.me", json!({})).await,
        1001,
        "a revoked PAT"
    );
    assert_eq!(
        srv.code(Some(&jwt), "token.revoke", json!({"id": created["id"]}))
            .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&jwt), "token.revoke", json!({"id": "not-a-uuid"}))
            .await,
        2002
    );
    // Revoking one token leaves the others and the password session alone.
    srv.ok(Some(&s(&read_only["token"])), "account.me", json!({}))
        .await;
    srv.ok(Some(&jwt), "account.me", json!({})).await;

    // Only a hash is stored: the database never holds the secret.
    let haystack = srv.stored_tokens();
    assert!(
        haystack.contains(&s(&item["prefix"])),
        "the scan reads the database"
    );
    assert!(!haystack.contains(&pat) && !haystack.contains(&s(&read_only["token"])));
}

#[tokio::test]
async fn another_users_resources_are_not_found() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    let bob = srv.user("bob@example.com", "bob-password").await;
    let pat = srv
        .ok(Some(&admin), "token.create", json!({"name": "mine"}))
        .await;
    assert_eq!(
        srv.code(Some(&bob), "token.revoke", json!({"id": pat["id"]}))
            .await,
        2001
    );
    srv.ok(Some(&s(&pat["token"])), "account.me", json!({}))
        .await;
    assert_eq!(
        srv.ok(Some(&bob), "token.list", json!({})).await["items"],
        json!([])
    );
    assert_eq!(
        srv.code(Some(&bob), "admin.user.list", json!({})).await,
        1003
    );
    assert_eq!(
        srv.code(
            Some(&bob),
            "admin.user.create",
            json!({"email": "c@c.io", "password": "12345678"})
        )
        .await,
        1003
    );
}

#[tokio::test]
async fn admins_create_and_list_users() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    let created = srv
        .ok(
            Some(&admin),
            "admin.user.create",
            json!({"email": "Carol@Example.com", "password": "carol-password"}),
        )
        .await;
    assert_eq!(created["user"]["email"], "carol@example.com");
    assert_eq!(created["user"]["is_admin"], false);
    let list = srv.ok(Some(&admin), "admin.user.list", json!({})).await;
    let emails: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].as_str().unwrap())
        .collect();
    assert_eq!(emails, vec![ADMIN_EMAIL, "carol@example.com"]);

    for (params, field) in [
        (
            json!({"email": "CAROL@example.com", "password": "another-one"}),
            "email",
        ),
        (
            json!({"email": "not-an-email", "password": "12345678"}),
            "email",
        ),
        (
            json!({"email": "d@example.com", "password": "short"}),
            "password",
        ),
        (
            json!({"email": "d@example.com", "password": "x".repeat(257)}),
            "password",
        ),
    ] {
        let e = srv
            .fail(Some(&admin), "admin.user.create", params.clone())
            .await;
        assert_eq!(
            (e["code"].clone(), e["data"]["errors"][0]["field"].clone()),
            (json!(2002), json!(field)),
            "{params}"
        );
    }
    srv.login("carol@example.com", "carol-password").await;
    let second_admin = srv
        .ok(
            Some(&admin),
            "admin.user.create",
            json!({"email": "dan@example.com", "password": "dan-password", "is_admin": true}),
        )
        .await;
    assert_eq!(second_admin["user"]["is_admin"], true);
}

#[tokio::test]
async fn set_password_keeps_only_the_calling_session() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    srv.ok(
        Some(&admin),
        "admin.user.create",
        json!({"email": "erin@example.com", "password": "old-password"}),
    )
    .await;
    let mine = srv.login("erin@example.com", "old-password").await;
    let other = srv.login("erin@example.com", "old-password").await;
    let me = s(&mine["access_token"]);
    let pat = s(&srv
        .ok(Some(&me), "token.create", json!({"name": "kept"}))
        .await["token"]);

    let wrong = json!({"current_password": "nope-nope", "new_password": "new-password"});
    assert_eq!(
        srv.code(Some(&me), "account.setPassword", wrong).await,
        1001
    );
    let short = json!({"current_password": "old-password", "new_password": "short"});
    assert_eq!(
        srv.code(Some(&me), "account.setPassword", short).await,
        2002
    );

    let fresh = srv
        .ok(
            Some(&me),
            "account.setPassword",
            json!({"current_password": "old-password", "new_password": "new-password"}),
        )
        .await;
    srv.ok(Some(&me), "account.me", json!({})).await;
    srv.ok(Some(&s(&fresh["access_token"])), "account.me", json!({}))
        .await;
    srv.ok(
        None,
        "auth.refresh",
        json!({"refresh_token": fresh["refresh_token"]}),
    )
    .await;
    assert_eq!(
        srv.code(
            None,
            "auth.refresh",
            json!({"refresh_token": mine["refresh_token"]})
        )
        .await,
        1001
    );

    assert_eq!(
        srv.code(Some(&s(&other["access_token"])), "account.me", json!({}))
            .await,
        1001
    );
    assert_eq!(
        srv.code(
            None,
            "auth.refresh",
            json!({"refresh_token": other["refresh_token"]})
        )
        .await,
        1001
    );
    assert_eq!(
        srv.code(
            None,
            "auth.login",
            json!({"email": "erin@example.com", "password": "old-password"})
        )
        .await,
        1001
    );
    srv.login("erin@example.com", "new-password").await;
    // Personal access tokens are not sessions and stay valid.
    srv.ok(Some(&pat), "account.me", json!({})).await;
}

#[tokio::test]
async fn set_email_verifies_the_password_and_uniqueness() {
    let srv = Server::start();
    let frank = srv.user("frank@example.com", "frank-password").await;
    let wrong = json!({"current_password": "not-it-at-all", "email": "f2@example.com"});
    assert_eq!(
        srv.code(Some(&frank), "account.setEmail", wrong).await,
        1001
    );
    let taken = json!({"current_password": "frank-password", "email": ADMIN_EMAIL.to_uppercase()});
    assert_eq!(
        srv.code(Some(&frank), "account.setEmail", taken).await,
        2002
    );
    let invalid = json!({"current_password": "frank-password", "email": "nope"});
    assert_eq!(
        srv.code(Some(&frank), "account.setEmail", invalid).await,
        2002
    );
    let done = srv
        .ok(
            Some(&frank),
            "account.setEmail",
            json!({"current_password": "frank-password", "email": "f2@example.com"}),
        )
        .await;
    assert_eq!(done["user"]["email"], "f2@example.com");
    srv.login("f2@example.com", "frank-password").await;
    assert_eq!(
        srv.code(
            None,
            "auth.login",
            json!({"email": "frank@example.com", "password": "frank-password"})
        )
        .await,
        1001
    );
}

#[tokio::test]
async fn login_is_throttled_after_five_failures() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    srv.ok(
        Some(&admin),
        "admin.user.create",
        json!({"email": "gina@example.com", "password": "gina-password"}),
    )
    .await;
    let bad = json!({"email": "gina@example.com", "password": "wrong-password"});
    for _ in 0..4 {
        let e = srv.fail(None, "auth.login", bad.clone()).await;
        assert_eq!(e["code"], 1001);
        assert!(e["data"].get("retry_after_s").is_none(), "{e}");
    }
    let fifth = srv.fail(None, "auth.login", bad.clone()).await;
    assert_eq!(fifth["data"]["retry_after_s"], 1);

    // Inside the window even the right password is refused unchecked.
    let good = json!({"email": "gina@example.com", "password": "gina-password"});
    let throttled = srv.fail(None, "auth.login", good.clone()).await;
    assert_eq!(throttled["code"], 1001);
    assert!(throttled["data"]["retry_after_s"].as_u64().unwrap() >= 1);
    // Other accounts from the same address are not affected.
    srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;

    // Once the window has passed, the right password works and resets the count.
    eventually(
        Duration::from_secs(10),
        "the backoff window to pass",
        || async {
            let r = srv.call(None, "auth.login", good.clone()).await;
            r.get("result").map(|_| ())
        },
    )
    .await;
    let after = srv.fail(None, "auth.login", bad.clone()).await;
    assert!(
        after["data"].get("retry_after_s").is_none(),
        "count was reset: {after}"
    );
}
