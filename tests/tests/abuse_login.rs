//! Issue 17, items 1 and 2: a login flood cannot exhaust memory, the
//! throttle is exact under parallel guesses, and it is keyed by the real
//! client (behind a trusted proxy, IPv6 by /64) without letting a stranger
//! lock the owner out. Issue 54, items 1 and 5: the budgets count failures,
//! so correct logins are never refused, and only the header the trusted
//! proxy writes (`LIGHTBOX_FORWARDED_HEADER`) names the client. Client
//! addresses are simulated through `X-Forwarded-For` (or `Forwarded`),
//! believed because the test trusts 127.0.0.1.

use futures::future::join_all;
use lightbox_e2e::{proc, Server, ADMIN_EMAIL, ADMIN_PASSWORD};
use serde_json::{json, Value};

async fn login_from(srv: &Server, from: &str, email: &str, password: &str) -> Value {
    login_with(srv, &[("X-Forwarded-For", from)], email, password).await
}

/// A login carrying `headers` (forwarding headers, as a client wrote them).
async fn login_with(srv: &Server, headers: &[(&str, &str)], email: &str, password: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "auth.login",
        "params": {"email": email, "password": password}});
    let mut req = srv.http().post(format!("{}/rpc", srv.url)).json(&body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let r = req.send().await.expect("login");
    r.json().await.expect("json")
}

fn wrong_credentials(answer: &Value) -> bool {
    answer["error"]["code"] == 1001 && answer["error"]["data"]["reason"] == "wrong_credentials"
}

fn throttled(answer: &Value) -> bool {
    answer["error"]["code"] == 1001 && answer["error"]["data"]["reason"] == "throttled"
}

#[tokio::test]
async fn a_login_flood_is_refused_before_hashing_and_memory_stays_bounded() {
    let server = Server::start_with(&[("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1")]);
    let srv = &server;
    let pid = srv.pid();
    // The owner signs in once from home; the account window spares it later.
    let home = "192.0.2.1";
    assert!(login_from(srv, home, ADMIN_EMAIL, ADMIN_PASSWORD).await["result"].is_object());
    let base = proc::reset_peak(pid);

    // One address, random emails: past 20 a minute, refused without hashing.
    let one = (0..60).map(|i| {
        let email = format!("nobody{i}@example.com");
        async move { login_from(srv, "203.0.113.7", &email, "guess-guess").await }
    });
    let answers = join_all(one).await;
    let refused: Vec<_> = answers.iter().filter(|a| throttled(a)).collect();
    assert!(refused.len() >= 40, "{} of 60 refused", refused.len());
    assert!(refused
        .iter()
        .all(|a| a["error"]["data"]["retry_after_s"].as_u64() >= Some(1)));

    // 48 addresses at once, random emails: hashing is bounded by the cores,
    // and the owner's correct login still works meanwhile.
    let many = (0..48).map(|i| {
        let (from, email) = (format!("198.51.100.{i}"), format!("r{i}@example.com"));
        async move { login_from(srv, &from, &email, "guess-guess").await }
    });
    let owner = login_from(srv, home, ADMIN_EMAIL, ADMIN_PASSWORD);
    let (flood, owner) = tokio::join!(join_all(many), owner);
    assert!(owner["result"]["access_token"].is_string(), "{owner}");
    // Wrong, or refused at once past the hashing queue's bound (4002).
    assert!(flood
        .iter()
        .all(|a| a["error"]["code"] == 1001 || a["error"]["code"] == 4002));
    let grew = proc::peak_mb(pid).saturating_sub(base);
    // 48 Argon2 hashes at once are ~900 MiB; one per core is ~40 MiB.
    assert!(grew < 200, "peak RSS grew {grew} MiB during the flood");
}

#[tokio::test]
async fn parallel_guesses_are_counted_exactly() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1"),
        ("LIGHTBOX_LOGIN_PER_ADDRESS_PER_MINUTE", "1000"),
        ("LIGHTBOX_LOGIN_PER_ACCOUNT_PER_MINUTE", "1000"),
    ]);
    let from = "203.0.113.9";
    for _ in 0..4 {
        let a = login_from(&srv, from, ADMIN_EMAIL, "wrong-password").await;
        assert!(!throttled(&a), "{a}");
    }
    // One failure is left before the backoff: of 20 parallel guesses
    // exactly one is checked, however they interleave.
    let burst = (0..20).map(|_| login_from(&srv, from, ADMIN_EMAIL, "wrong-password"));
    let answers = join_all(burst).await;
    let checked = answers.iter().filter(|a| !throttled(a)).count();
    assert_eq!(checked, 1, "{answers:?}");
}

#[tokio::test]
async fn clients_are_keyed_by_the_trusted_proxy_chain_and_ipv6_by_64() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8"),
        ("LIGHTBOX_LOGIN_PER_ADDRESS_PER_MINUTE", "5"),
        ("LIGHTBOX_LOGIN_PER_ACCOUNT_PER_MINUTE", "1000"),
    ]);
    // Rotating within one /64 is one client.
    for i in 1..=5 {
        let from = format!("2001:db8:1:2::{i:x}");
        assert!(!throttled(
            &login_from(&srv, &from, "a@example.com", "x-x-x-x-x").await
        ));
    }
    let sixth = login_from(&srv, "2001:db8:1:2:ffff::1", "a@example.com", "x-x-x-x-x").await;
    assert!(throttled(&sixth), "{sixth}");
    // A spoofed left-most hop changes nothing: the proxy saw 2001:db8:1:2::9.
    let spoof = "6.6.6.6, 2001:db8:1:2::9, 10.1.2.3";
    assert!(throttled(
        &login_from(&srv, spoof, "a@example.com", "x-x-x-x-x").await
    ));
    // Another /64 is another client.
    let other = login_from(&srv, "2001:db8:1:3::1", ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert!(other["result"].is_object(), "{other}");
}

#[tokio::test]
async fn a_stranger_cannot_lock_the_owner_out_of_their_own_address() {
    let server = Server::start_with(&[
        ("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1"),
        ("LIGHTBOX_LOGIN_PER_ACCOUNT_PER_MINUTE", "10"),
    ]);
    let srv = &server;
    let home = "192.0.2.44";
    assert!(login_from(srv, home, ADMIN_EMAIL, ADMIN_PASSWORD).await["result"].is_object());
    // Guesses at the owner's account from one address, then from thirty.
    for _ in 0..8 {
        login_from(srv, "203.0.113.66", ADMIN_EMAIL, "wrong-password").await;
    }
    let spray = (0..30).map(|i| {
        let from = format!("198.51.100.{}", 100 + i);
        async move { login_from(srv, &from, ADMIN_EMAIL, "wrong-password").await }
    });
    let sprayed = join_all(spray).await;
    assert!(
        sprayed.iter().filter(|a| throttled(a)).count() >= 20,
        "the account window holds strangers back"
    );
    let owner = login_from(srv, home, ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert!(owner["result"]["access_token"].is_string(), "{owner}");
}

#[tokio::test]
async fn an_office_signs_in_forty_people_while_guesses_from_it_are_throttled() {
    let server = Server::start_with(&[("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1")]);
    let srv = &server;
    let admin = srv.admin_token().await;
    let people: Vec<String> = (0..40).map(|i| format!("staff{i}@example.com")).collect();
    for chunk in people.chunks(4) {
        join_all(chunk.iter().map(|email| {
            let params = json!({"email": email, "password": "office-password"});
            srv.ok(Some(&admin), "admin.user.create", params)
        }))
        .await;
    }
    // One address (the office's NAT), the default budget of 20 a minute:
    // forty correct logins, four at a time, with ten wrong guesses between
    // them, then twenty more guesses, all within the minute.
    let office = "203.0.113.40";
    let guess = |i: usize| async move {
        let email = format!("nobody{i}@example.com");
        login_from(srv, office, &email, "guess-guess").await
    };
    let mut guesses = Vec::new();
    for (n, chunk) in people.chunks(4).enumerate() {
        let logins = join_all(
            chunk
                .iter()
                .map(|email| login_from(srv, office, email, "office-password")),
        )
        .await;
        for (email, answer) in chunk.iter().zip(&logins) {
            assert!(
                answer["result"]["access_token"].is_string(),
                "{email}: {answer}"
            );
        }
        guesses.push(guess(n).await);
    }
    assert!(guesses.iter().all(wrong_credentials), "{guesses:?}");
    for i in 10..30 {
        guesses.push(guess(i).await);
    }
    let refused: Vec<&Value> = guesses.iter().filter(|a| throttled(a)).collect();
    // 20 failures a minute, one more every 3 s while the test runs.
    assert!(
        refused.len() >= 5,
        "{} of 30 guesses refused",
        refused.len()
    );
    assert!(refused
        .iter()
        .all(|a| a["error"]["data"]["retry_after_s"].as_u64() >= Some(1)));
    assert!(guesses[..20].iter().all(wrong_credentials), "{guesses:?}");
}

#[tokio::test]
async fn forged_forwarded_headers_change_nothing() {
    let server = Server::start_with(&[("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1")]);
    let srv = &server;
    // The proxy writes X-Forwarded-For; a rotating `Forwarded: for=` the
    // client wrote itself does not make thirty guesses thirty addresses.
    let mut answers = Vec::new();
    for i in 0..30 {
        let forged = format!("for=198.51.100.{i}");
        let headers = [("X-Forwarded-For", "203.0.113.50"), ("Forwarded", &forged)];
        let email = format!("nobody{i}@example.com");
        answers.push(login_with(srv, &headers, &email, "guess-guess").await);
    }
    let refused = answers.iter().filter(|a| throttled(a)).count();
    assert!(refused >= 5, "{refused} of 30 refused");
    // Failures forged in a victim's name do not lock the victim out.
    let victim = "192.0.2.77";
    assert!(login_from(srv, victim, ADMIN_EMAIL, ADMIN_PASSWORD).await["result"].is_object());
    for _ in 0..8 {
        let headers = [
            ("X-Forwarded-For", "203.0.113.51"),
            ("Forwarded", "for=192.0.2.77"),
        ];
        login_with(srv, &headers, ADMIN_EMAIL, "wrong-password").await;
    }
    let back = login_from(srv, victim, ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert!(back["result"]["access_token"].is_string(), "{back}");
}

#[tokio::test]
async fn a_proxy_that_writes_forwarded_is_believed_and_x_forwarded_for_is_not() {
    let server = Server::start_with(&[
        ("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1"),
        ("LIGHTBOX_FORWARDED_HEADER", "forwarded"),
        ("LIGHTBOX_LOGIN_PER_ADDRESS_PER_MINUTE", "5"),
    ]);
    let srv = &server;
    let mut answers = Vec::new();
    for i in 0..10 {
        let forged = format!("198.51.100.{i}");
        let headers = [
            ("Forwarded", "for=\"[2001:db8:5::1]:4711\";proto=https"),
            ("X-Forwarded-For", &forged),
        ];
        let email = format!("nobody{i}@example.com");
        answers.push(login_with(srv, &headers, &email, "guess-guess").await);
    }
    assert!(answers[..5].iter().all(wrong_credentials), "{answers:?}");
    assert!(answers[5..].iter().all(throttled), "{answers:?}");
    // Another client behind the same proxy is another address.
    let other = [("Forwarded", "for=2001:db8:6::1")];
    let answer = login_with(srv, &other, "a@example.com", "guess-guess").await;
    assert!(wrong_credentials(&answer), "{answer}");
    // X-Forwarded-For alone names nobody: these all come from the peer.
    let mut answers = Vec::new();
    for i in 0..6 {
        let forged = format!("198.51.100.{}", 100 + i);
        let email = format!("x{i}@example.com");
        answers.push(login_from(srv, &forged, &email, "guess-guess").await);
    }
    assert!(answers[..5].iter().all(wrong_credentials), "{answers:?}");
    assert!(throttled(&answers[5]), "{answers:?}");
}
