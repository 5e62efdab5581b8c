//! The pre-delete hook (`lightbox-controller uninstall`) against a mock API
//! server: the release's resources are deleted and waited for, then a
//! finalizer nobody will release any more is dropped, and nothing else is
//! touched. Every request must be one the chart grants the hook.

use http::{Method, Request, Response};
use kube::client::Body;
use lightbox_controller::rbac::{call_of, UNINSTALL_CALLS};
use lightbox_controller::reconcile::FINALIZER;
use lightbox_controller::scope::Scope;
use serde_json::{json, Value};
use std::time::Duration;

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

const PRESETS: &str = "/apis/lightbox.dev/v1/namespaces/photos/croppresets";

async fn answer(api: &mut Handle, method: Method, path: &str, reply: Value) -> (String, Value) {
    let (req, send) = tokio::time::timeout(Duration::from_secs(5), api.next_request())
        .await
        .unwrap_or_else(|_| panic!("no request came; expected {method} {path}"))
        .expect("the client hung up");
    assert_eq!((req.method(), req.uri().path()), (&method, path));
    let (group, resource, verb) = call_of(method.as_str(), path).unwrap();
    assert!(
        UNINSTALL_CALLS
            .iter()
            .any(|c| c.group == group && c.resource == resource && c.verb == verb),
        "{method} {path} is not granted to the hook"
    );
    let query = req.uri().query().unwrap_or("").to_owned();
    let bytes = req.into_body().collect_bytes().await.unwrap();
    send.send_response(
        Response::builder()
            .body(Body::from(serde_json::to_vec(&reply).unwrap()))
            .unwrap(),
    );
    (query, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn preset(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "lightbox.dev/v1", "kind": "CropPreset",
        "metadata": {"name": name, "namespace": "photos", "resourceVersion": "9", "finalizers": finalizers},
        "spec": {"code": name, "width": 10, "height": 10}})
}

fn list(kind: &str, items: Vec<Value>) -> Value {
    json!({"apiVersion": "lightbox.dev/v1", "kind": kind,
        "metadata": {"resourceVersion": "10"}, "items": items})
}

#[tokio::test]
async fn the_releases_resources_go_first_and_no_finalizer_is_left_behind() {
    let (svc, mut api) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let scope = Scope::parse("photos");
    let hook = lightbox_controller::uninstall::run(client, &scope, "lb", Duration::from_secs(30));
    let verify = async {
        let ours = preset("thumb", &[FINALIZER]);
        let (query, _) = answer(
            &mut api,
            Method::GET,
            PRESETS,
            list("CropPresetList", vec![ours.clone()]),
        )
        .await;
        assert!(
            query.contains("app.kubernetes.io%2Finstance%3Dlb"),
            "{query}"
        );
        answer(&mut api, Method::DELETE, &format!("{PRESETS}/thumb"), ours).await;
        // The controller released and removed it.
        answer(
            &mut api,
            Method::GET,
            PRESETS,
            list("CropPresetList", vec![]),
        )
        .await;
        // Made by hand, still finalized: released, conditionally.
        // One of ours still being deleted (not released in time), and a
        // live one made outside the chart, which is left alone.
        let mut manual = preset("manual", &[FINALIZER, "example.com/other"]);
        manual["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
        let live = preset("live", &[FINALIZER]);
        let (query, _) = answer(
            &mut api,
            Method::GET,
            PRESETS,
            list("CropPresetList", vec![manual.clone(), live]),
        )
        .await;
        assert!(!query.contains("labelSelector"), "{query}");
        let (_, patch) = answer(
            &mut api,
            Method::PATCH,
            &format!("{PRESETS}/manual"),
            manual,
        )
        .await;
        assert_eq!(
            patch["metadata"]["finalizers"],
            json!(["example.com/other"])
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "9");
        for (plural, kind) in [
            ("aliaslimits", "AliasLimitList"),
            ("renderquotas", "RenderQuotaList"),
        ] {
            let path = format!("/apis/lightbox.dev/v1/namespaces/photos/{plural}");
            for _ in 0..3 {
                answer(&mut api, Method::GET, &path, list(kind, vec![])).await;
            }
        }
    };
    let (done, ()) = tokio::join!(hook, verify);
    done.unwrap();
}

/// Watching every namespace, the hook lists cluster-wide but deletes each
/// object in its own namespace (a cluster-wide DELETE of a namespaced kind
/// would be a 404 the hook took for "already gone").
#[tokio::test]
async fn watching_every_namespace_deletes_in_the_objects_namespace() {
    let (svc, mut api) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let scope = Scope::parse("");
    let hook = lightbox_controller::uninstall::run(client, &scope, "lb", Duration::from_secs(30));
    let all = "/apis/lightbox.dev/v1/croppresets";
    let verify = async {
        let ours = preset("thumb", &[FINALIZER]);
        answer(
            &mut api,
            Method::GET,
            all,
            list("CropPresetList", vec![ours.clone()]),
        )
        .await;
        answer(&mut api, Method::DELETE, &format!("{PRESETS}/thumb"), ours).await;
        answer(&mut api, Method::GET, all, list("CropPresetList", vec![])).await;
        let mut late = preset("late", &[FINALIZER]);
        late["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
        answer(
            &mut api,
            Method::GET,
            all,
            list("CropPresetList", vec![late.clone()]),
        )
        .await;
        let (_, patch) = answer(&mut api, Method::PATCH, &format!("{PRESETS}/late"), late).await;
        assert_eq!(patch["metadata"]["finalizers"], json!([]));
        for (plural, kind) in [
            ("aliaslimits", "AliasLimitList"),
            ("renderquotas", "RenderQuotaList"),
        ] {
            let path = format!("/apis/lightbox.dev/v1/{plural}");
            for _ in 0..3 {
                answer(&mut api, Method::GET, &path, list(kind, vec![])).await;
            }
        }
    };
    let (done, ()) = tokio::join!(hook, verify);
    done.unwrap();
}
