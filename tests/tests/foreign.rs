//! The authorization matrix, continued: another user's valid JWT against
//! every method of the one method table (aimed at the owner's image, folder,
//! alias, share token and PAT), and expired or foreign download and archive
//! links on the routes that take them. A resource that is not the caller's
//! is 2001; a link that is not for this path, or expired, is 401; nothing
//! the owner has changes.

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lightbox_api::rpc::methods::{Access, METHODS};
use lightbox_e2e::{Server, SIGNING_KEY};
use serde_json::{json, Value};

/// The owner's things an intruder aims at.
struct Target {
    image: Value,
    album: Value,
    alias: &'static str,
    share_token: Value,
    pat: Value,
    /// The intruder's own folder, to mix with the owner's image.
    own_album: Value,
    own_image: Value,
    /// A re-render job of the owner's.
    job: Value,
}

/// What another user's JWT must get: `Some(code)`, or `None` for a method
/// that acts only on the caller's own account (checked by the digest).
fn intrusions(method: &str, t: &Target) -> Vec<(Value, Option<i64>)> {
    let (img, alb) = (&t.image, &t.album);
    let one = |params: Value| vec![(params, Some(2001))];
    match method {
        "account.me"
        | "account.setEmail"
        | "account.setPassword"
        | "token.create"
        | "token.list"
        | "album.create"
        | "album.list"
        | "album.alias.check" => {
            vec![]
        }
        "admin.user.create" | "admin.user.list" | "admin.takedown" | "admin.restore" => {
            vec![(json!({"id": img}), Some(1003))]
        }
        "token.revoke" => one(json!({"id": t.pat})),
        "album.get" | "album.delete" => one(json!({"id": alb})),
        "album.update" => one(json!({"id": alb, "name": "mine now"})),
        "album.reorder" => one(json!({"album_id": alb, "ordered_ids": [img]})),
        "album.crop.set" => one(json!({"album_id": alb, "code": "sq", "width": 9, "height": 9})),
        "album.crop.delete" => one(json!({"album_id": alb, "code": "sq"})),
        "album.ownerStatus" => vec![
            (json!({"id": alb}), Some(2001)),
            (json!({"alias": t.alias}), Some(2001)),
            (json!({"token": t.share_token}), Some(2001)),
        ],
        "album.downloadToken" => one(json!({"album_id": alb, "variant": "full"})),
        "album.sharing.get"
        | "album.sharing.resetToken"
        | "album.sharing.republish"
        | "album.preview" => one(json!({"album_id": alb})),
        "album.sharing.setPolicy" => one(json!({"album_id": alb, "allow_download": false})),
        "album.sharing.setMode" => one(json!({"album_id": alb, "mode": "private"})),
        "album.alias.release" => one(json!({"album_id": alb, "alias": t.alias})),
        "album.cover.set" => vec![
            (json!({"album_id": alb, "image_id": null}), Some(2001)),
            (
                json!({"album_id": t.own_album, "image_id": img}),
                Some(2001),
            ),
        ],
        "image.list" => one(json!({"album_id": alb})),
        "image.get" | "image.delete" | "image.archiveToken" | "image.download.status" => {
            one(json!({"id": img}))
        }
        "image.update" => vec![
            (json!({"id": img, "title": "mine now"}), Some(2001)),
            (json!({"id": t.own_image, "album_id": alb}), Some(2001)),
        ],
        "image.crop.add" => one(json!({"id": img, "code": "sq", "width": 9, "height": 9})),
        "image.crop.delete" => one(json!({"id": img, "code": "sq"})),
        "image.setVisibility" => one(json!({"id": img, "visibility": "public"})),
        "image.exif.setVisibility" => one(json!({"id": img, "groups": {"camera": true}})),
        "image.downloadToken" => one(json!({"id": img, "variant": "full"})),
        "job.get" => one(json!({"job_id": t.job})),
        other => {
            panic!("{other} is in the method table but not here: say what another user's JWT gets")
        }
    }
}

/// Everything the owner can see of their things.
async fn digest(srv: &Server, jwt: &str, t: &Target) -> Value {
    let mut out = vec![];
    for (method, params) in [
        ("account.me", json!({})),
        ("image.list", json!({})),
        ("album.list", json!({})),
        ("image.get", json!({"id": t.image})),
        ("album.get", json!({"id": t.album})),
        ("album.sharing.get", json!({"album_id": t.album})),
        ("album.ownerStatus", json!({"id": t.album})),
    ] {
        out.push(srv.ok(Some(jwt), method, params).await);
    }
    let tokens = srv.ok(Some(jwt), "token.list", json!({})).await;
    let ids: Vec<_> = tokens["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].clone())
        .collect();
    out.push(json!(ids));
    Value::Array(out)
}

async fn setup(srv: &Server) -> (String, String, Target) {
    let jwt = srv.user("owner@example.com", "owner-password-1").await;
    let bob = srv.user("bob@example.com", "bob-password-12").await;
    let image = srv.photo(&jwt, 640, 480, "kept").await["id"].clone();
    let album = srv
        .ok(Some(&jwt), "album.create", json!({"name": "Trip"}))
        .await["id"]
        .clone();
    srv.ok(
        Some(&jwt),
        "image.update",
        json!({"id": image, "album_id": album}),
    )
    .await;
    srv.ok(
        Some(&jwt),
        "album.sharing.setMode",
        json!({"album_id": album, "mode": "public", "alias": "owner-trip"}),
    )
    .await;
    let link = srv
        .ok(
            Some(&jwt),
            "album.sharing.setMode",
            json!({"album_id": album, "mode": "unlisted"}),
        )
        .await;
    // A job of the owner's, finished before anything is compared.
    let job = srv
        .ok(
            Some(&jwt),
            "album.crop.set",
            json!({"album_id": album, "code": "wide", "width": 300, "height": 100}),
        )
        .await["job_id"]
        .clone();
    lightbox_e2e::eventually(std::time::Duration::from_secs(60), "the job", || async {
        let j = srv.ok(Some(&jwt), "job.get", json!({"job_id": job})).await;
        (j["state"] == "done").then_some(())
    })
    .await;
    let share_url = link["links"]["share_url"].as_str().expect("share_url");
    let share_token = json!(share_url.rsplit('/').next().unwrap());
    let pat = srv
        .ok(
            Some(&jwt),
            "token.create",
            json!({"name": "cli", "scopes": ["read"]}),
        )
        .await["id"]
        .clone();
    let own_image = srv.photo(&bob, 320, 240, "bobs").await["id"].clone();
    let own_album = srv
        .ok(Some(&bob), "album.create", json!({"name": "Bob's"}))
        .await["id"]
        .clone();
    let target = Target {
        image,
        album,
        alias: "owner-trip",
        share_token,
        pat,
        own_album,
        own_image,
        job,
    };
    (jwt, bob, target)
}

#[tokio::test]
async fn another_users_jwt_reaches_nothing_of_the_owner() {
    let srv = Server::start();
    let (jwt, bob, t) = setup(&srv).await;
    assert!(t.share_token.is_string(), "link mode gives a token");
    let before = digest(&srv, &jwt, &t).await;

    let mut checked = 0;
    for m in METHODS.iter().filter(|m| m.access != Access::Public) {
        for (params, want) in intrusions(m.name, &t) {
            let got = srv.call(Some(&bob), m.name, params.clone()).await;
            assert_eq!(
                got["error"]["code"].as_i64(),
                want,
                "{} {params} with bob's JWT: {got}",
                m.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 35, "only {checked} intrusions?");

    // The methods that act on the caller's own account show none of the owner's.
    let seen = json!([
        srv.ok(Some(&bob), "image.list", json!({})).await,
        srv.ok(Some(&bob), "album.list", json!({})).await,
        srv.ok(Some(&bob), "token.list", json!({})).await,
        srv.ok(Some(&bob), "account.me", json!({})).await,
    ])
    .to_string();
    for theirs in [&t.image, &t.album, &t.pat] {
        assert!(
            !seen.contains(theirs.as_str().unwrap()),
            "bob sees {theirs}"
        );
    }
    assert!(!seen.contains("owner@example.com"));
    let check = srv
        .ok(Some(&bob), "album.alias.check", json!({"alias": t.alias}))
        .await;
    assert_eq!(check["status"], json!("taken"), "{check}");
    assert_eq!(
        digest(&srv, &jwt, &t).await,
        before,
        "bob changed the owner's things"
    );
}

/// The same claims, signed again with a changed field.
fn resign(token: &str, change: impl FnOnce(&mut Value)) -> String {
    let mut v = Validation::new(Algorithm::HS256);
    v.validate_exp = false;
    v.required_spec_claims.clear();
    let key = DecodingKey::from_secret(SIGNING_KEY.as_bytes());
    let mut claims = decode::<Value>(token, &key, &v).unwrap().claims;
    change(&mut claims);
    let enc = EncodingKey::from_secret(SIGNING_KEY.as_bytes());
    encode(&Header::new(Algorithm::HS256), &claims, &enc).unwrap()
}

fn token_of(url: &Value) -> String {
    let url = url.as_str().unwrap();
    url.split("token=").nth(1).unwrap().to_owned()
}

#[tokio::test]
async fn expired_and_foreign_links_are_refused_on_every_link_route() {
    let srv = Server::start();
    let (jwt, bob, t) = setup(&srv).await;
    let bobs_album = t.own_album.clone();
    srv.ok(
        Some(&bob),
        "image.update",
        json!({"id": t.own_image, "album_id": bobs_album}),
    )
    .await;
    let img = t.image.as_str().unwrap();
    let alb = t.album.as_str().unwrap();
    let routes = [
        (
            "image.downloadToken",
            json!({"id": t.image, "variant": "full"}),
            json!({"id": t.own_image, "variant": "full"}),
            format!("/api/v1/images/{img}/download"),
        ),
        (
            "album.downloadToken",
            json!({"album_id": t.album, "variant": "full"}),
            json!({"album_id": bobs_album, "variant": "full"}),
            format!("/api/v1/albums/{alb}/download"),
        ),
        (
            "image.archiveToken",
            json!({"id": t.image}),
            json!({"id": t.own_image}),
            format!("/api/v1/images/{img}/archive"),
        ),
    ];
    let before = digest(&srv, &jwt, &t).await;
    for (method, mine, his, path) in routes {
        let good = token_of(&srv.ok(Some(&jwt), method, mine).await["url"]);
        let foreign = token_of(&srv.ok(Some(&bob), method, his).await["url"]);
        assert_eq!(
            srv.fetch(&format!("{path}?token={good}")).await.0,
            200,
            "{method}: the owner's own link"
        );
        let stale = resign(&good, |c| {
            c["exp"] = json!(chrono::Utc::now().timestamp() - 60)
        });
        // Bob's link for his own thing, pointed at the owner's: signed and
        // fresh, but the ownership recheck must refuse it.
        let stolen = resign(&foreign, |c| {
            c["subject"] = json!(if path.contains("/albums/") { alb } else { img })
        });
        for (what, token, want) in [
            ("an expired link", stale, 401),
            ("another user's link", foreign, 401),
            ("another user's link re-aimed at this", stolen, 404),
        ] {
            let (status, body, _) = srv.fetch(&format!("{path}?token={token}")).await;
            assert_eq!(
                status,
                want,
                "{method} with {what}: {}",
                String::from_utf8_lossy(&body)
            );
            assert!(body.len() < 2048, "{method} with {what} sent content");
        }
    }
    assert_eq!(digest(&srv, &jwt, &t).await, before);
}
