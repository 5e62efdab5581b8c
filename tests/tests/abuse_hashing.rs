//! Issue 54, item 6: password hashing is a bounded queue nobody can clog.
//! Re-authentication (`account.setEmail` / `account.setPassword`) is
//! throttled like a login, the queue refuses with 4002 when full instead
//! of making everyone wait, work whose caller has gone is dropped unhashed,
//! and someone signing in meanwhile is answered within a second. Client
//! addresses are simulated through `X-Forwarded-For`, believed because the
//! test trusts 127.0.0.1.

use futures::future::join_all;
use lightbox_e2e::{eventually, metric, Server, ADMIN_EMAIL, ADMIN_PASSWORD};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

async fn call_from(
    srv: &Server,
    from: &str,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut req = srv
        .http()
        .post(format!("{}/rpc", srv.url))
        .header("X-Forwarded-For", from)
        .json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.expect("rpc").json().await.expect("json")
}

/// Logs the admin in from `from`; the answer and how long it took.
async fn timed_login(srv: &Server, from: &str) -> (Value, Duration) {
    let started = Instant::now();
    let params = json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD});
    let answer = call_from(srv, from, None, "auth.login", params).await;
    (answer, started.elapsed())
}

fn reason(answer: &Value) -> &str {
    answer["error"]["data"]["reason"].as_str().unwrap_or("")
}

async fn hashes(srv: &Server, outcome: &str) -> f64 {
    let name = format!("lightbox_password_hashes_total{{outcome=\"{outcome}\"}}");
    metric(&srv.metrics().await, &name)
}

/// One thief's guess at the current password, by either method.
async fn guess(srv: &Server, from: &str, thief: &str, i: usize) -> Value {
    let guess = format!("guess-{i:06}");
    let (method, params) = if i.is_multiple_of(2) {
        let p = json!({"current_password": guess, "new_password": "taken-over-1"});
        ("account.setPassword", p)
    } else {
        let p = json!({"current_password": guess, "email": "thief@example.com"});
        ("account.setEmail", p)
    };
    call_from(srv, from, Some(thief), method, params).await
}

#[tokio::test]
async fn a_reauthentication_flood_leaves_a_concurrent_login_under_a_second() {
    let server = Server::start_with(&[("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1")]);
    let srv = &server;
    let thief = srv.user("victim@example.com", "victim-password").await;
    // A stolen session guessing the current password: 100 callers from
    // twenty addresses, each sending its next guess as soon as the last is
    // answered, until the admin has signed in five times. Unthrottled,
    // that kept 100 hashes queued ahead of everyone.
    let (stop, sent) = (AtomicBool::new(false), AtomicUsize::new(0));
    let flood = (0..100).map(|n| {
        let (stop, sent, thief) = (&stop, &sent, thief.as_str());
        async move {
            let from = format!("198.51.100.{}", n % 20);
            let mut answers = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let i = sent.fetch_add(1, Ordering::Relaxed);
                answers.push(guess(srv, &from, thief, i).await);
            }
            answers
        }
    });
    // The admin signs in from addresses it never used, so its checks
    // queue behind any stranger's, once the flood is in full swing.
    let logins = async {
        eventually(Duration::from_secs(30), "the flood to start", || async {
            (sent.load(Ordering::Relaxed) >= 300).then_some(())
        })
        .await;
        let mut logins = Vec::new();
        for i in 0..5 {
            logins.push(timed_login(srv, &format!("192.0.2.{}", 100 + i)).await);
        }
        stop.store(true, Ordering::Relaxed);
        logins
    };
    let (answers, logins) = tokio::join!(join_all(flood), logins);
    let answers: Vec<Value> = answers.into_iter().flatten().collect();
    eprintln!(
        "{} guesses; logins meanwhile: {:?}",
        answers.len(),
        logins.iter().map(|l| l.1).collect::<Vec<_>>()
    );
    for (answer, took) in &logins {
        assert!(answer["result"]["access_token"].is_string(), "{answer}");
        assert!(*took < Duration::from_secs(1), "a login took {took:?}");
    }
    // Wrong, throttled, or past the account's share of the hashing queue.
    assert!(
        answers
            .iter()
            .all(|a| a["error"]["code"] == 1001 || a["error"]["code"] == 4002),
        "{answers:?}"
    );
    let checked = answers
        .iter()
        .filter(|a| reason(a) == "wrong_credentials")
        .count();
    // The account's budget for addresses that never signed in to it: 20
    // failures a minute.
    assert!(
        checked <= 25,
        "{checked} of {} guesses were checked",
        answers.len()
    );
    assert!(answers.iter().any(
        |a| reason(a) == "throttled" && a["error"]["data"]["retry_after_s"].as_u64() >= Some(1)
    ));
    // Nothing it sent took, and the victim's own address (127.0.0.1, where
    // it signed in) is not held back by the thief's failures.
    srv.login("victim@example.com", "victim-password").await;
}

#[tokio::test]
async fn the_hashing_queue_refuses_when_full_and_lets_the_owner_go_first() {
    let server = Server::start_with(&[("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1")]);
    let srv = &server;
    let home = "192.0.2.1";
    assert!(timed_login(srv, home).await.0["result"].is_object());
    // 60 strangers at once, each from its own address with its own email:
    // more checks than the queue holds, none held back by a login budget.
    let burst = (0..60).map(|i| {
        let from = format!("198.18.0.{}", i + 1);
        let params = json!({"email": format!("r{i}@example.com"), "password": "guess-guess"});
        async move {
            let started = Instant::now();
            let answer = call_from(srv, &from, None, "auth.login", params).await;
            (answer, started.elapsed(), Instant::now())
        }
    });
    // Once the queue is full, the owner signs in from home: its check goes
    // before the strangers' still queued.
    let owner = async {
        eventually(Duration::from_secs(30), "a full queue", || async {
            (hashes(srv, "refused").await > 0.0).then_some(())
        })
        .await;
        let (answer, took) = timed_login(srv, home).await;
        (answer, took, Instant::now())
    };
    let (answers, (owner, took, owner_at)) = tokio::join!(join_all(burst), owner);
    assert!(owner["result"]["access_token"].is_string(), "{owner}");
    let full: Vec<&Value> = answers
        .iter()
        .map(|a| &a.0)
        .filter(|a| a["error"]["code"] == 4002)
        .collect();
    let overtaken = answers
        .iter()
        .filter(|(a, _, at)| reason(a) == "wrong_credentials" && *at > owner_at)
        .count();
    let slowest = answers.iter().map(|a| a.1).max().unwrap_or_default();
    eprintln!(
        "60 strangers: {} refused with 4002, slowest {slowest:?}; the owner took {took:?} \
         and overtook {overtaken}",
        full.len()
    );
    assert!(!full.is_empty(), "the queue never filled");
    assert!(full.iter().all(|a| a["error"]["message"] == "rate_limited"
        && a["error"]["data"]["retry_after_s"].as_u64() >= Some(1)));
    assert!(answers
        .iter()
        .all(|(a, _, _)| a["error"]["code"] == 4002 || reason(a) == "wrong_credentials"));
    assert!(
        overtaken >= 3,
        "the owner overtook {overtaken} queued strangers"
    );
    // Nobody waited behind an unbounded queue.
    assert!(
        slowest < Duration::from_secs(5),
        "a stranger waited {slowest:?}"
    );
    assert!(hashes(srv, "refused").await >= full.len() as f64);

    // Strangers who hang up once the queue is full: their queued checks
    // are dropped when their turn comes, not hashed after they left.
    let refused = hashes(srv, "refused").await;
    let abandoned = hashes(srv, "abandoned").await;
    let gone = join_all((0..100).map(|i| {
        let from = format!("198.19.0.{}", i + 1);
        let params = json!({"email": format!("g{i}@example.com"), "password": "guess-guess"});
        async move { call_from(srv, &from, None, "auth.login", params).await }
    }));
    let full = eventually(Duration::from_secs(30), "a full queue", || async {
        (hashes(srv, "refused").await > refused).then_some(())
    });
    tokio::select! {
        _ = gone => panic!("every check was answered before the queue filled"),
        // Dropping the calls closes their connections.
        () = full => {}
    }
    let dropped = eventually(Duration::from_secs(10), "abandoned hashes", || async {
        let n = hashes(srv, "abandoned").await - abandoned;
        (n > 0.0).then_some(n)
    })
    .await;
    eprintln!("{dropped} checks dropped unhashed after their callers left");
    let (owner, _) = timed_login(srv, home).await;
    assert!(owner["result"].is_object(), "{owner}");
}
