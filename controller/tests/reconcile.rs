//! The reconcilers against a mock API server (tower-test), as kube-rs's
//! controller-rs tests them: each test states the exact requests the
//! controller must make, in order, and answers them; the database is a real
//! SQLite file, so what the reconciler applied is checked there.

use http::{Method, Request, Response};
use kube::client::Body;
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use lightbox_controller::leader::LeaseLock;
use lightbox_controller::reconcile::{self, error_policy, Context, Error, FINALIZER};
use lightbox_controller::resources::{
    CropPreset, CropPresetSpec, Format, Mode, RenderQuota, RenderQuotaSpec,
};
use lightbox_controller::scope::Scope;
use lightbox_core::resources::Resources;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

struct Fixture {
    ctx: Arc<Context>,
    api: Handle,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn fixture() -> Fixture {
    let dir = std::env::temp_dir().join(format!("lbx-ctl-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("db.sqlite").display());
    let repo = lightbox_core::db::connect(&url).await.unwrap();
    let (svc, api) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let reporter = Reporter {
        controller: "lightbox-controller".into(),
        instance: Some("test".into()),
    };
    let ctx = Arc::new(Context::new(
        client.clone(),
        repo,
        Recorder::new(client, reporter),
    ));
    Fixture {
        ctx,
        api,
        _dir: TempDir(dir),
    }
}

fn preset(code: &str, finalized: bool, deleted: bool) -> CropPreset {
    let mut p = CropPreset::new(
        "square",
        CropPresetSpec {
            code: code.into(),
            width: 600,
            height: 600,
            mode: Mode::Fill,
            format: Format::Webp,
            quality: 82,
            focus: None,
        },
    );
    p.metadata.namespace = Some("photos".into());
    p.metadata.generation = Some(3);
    p.metadata.resource_version = Some("7".into());
    if finalized {
        p.metadata.finalizers = Some(vec![FINALIZER.into()]);
    }
    if deleted {
        p.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        ));
    }
    p
}

/// Takes the next request, checks its method and path, answers `reply`
/// (or an echo of the request body), and returns the body it carried.
async fn expect(api: &mut Handle, method: Method, path: &str, reply: Option<Value>) -> Value {
    let (req, send) = tokio::time::timeout(Duration::from_secs(5), api.next_request())
        .await
        .unwrap_or_else(|_| panic!("no request came; expected {method} {path}"))
        .expect("the client hung up");
    assert_eq!(req.method(), method, "{}", req.uri());
    assert_eq!(req.uri().path(), path);
    assert!(
        lightbox_controller::rbac::listed(method.as_str(), path),
        "{method} {path} is not in rbac::CALLS, so the chart's RBAC would refuse it"
    );
    let bytes = req.into_body().collect_bytes().await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let answer = reply.unwrap_or_else(|| body.clone());
    send.send_response(
        Response::builder()
            .body(Body::from(serde_json::to_vec(&answer).unwrap()))
            .unwrap(),
    );
    body
}

const PRESET_PATH: &str = "/apis/lightbox.dev/v1/namespaces/photos/croppresets/square";
const EVENTS_PATH: &str = "/apis/events.k8s.io/v1/namespaces/photos/events";

#[tokio::test]
async fn a_new_preset_first_gets_the_finalizer_and_nothing_else() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let p = preset("square", false, false);
    let mut finalized = serde_json::to_value(preset("square", true, false)).unwrap();
    finalized["metadata"]["resourceVersion"] = "8".into();
    let (action, patch) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(p), ctx.clone()),
        expect(&mut api, Method::PATCH, PRESET_PATH, Some(finalized))
    );
    assert_eq!(action.unwrap(), Action::await_change());
    assert!(patch.to_string().contains(FINALIZER), "{patch}");
    assert!(ctx.repo.resources("crop_preset").await.unwrap().is_empty());
}

#[tokio::test]
async fn an_applied_preset_is_stored_announced_and_marked_ready() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let p = preset("square", true, false);
    let answer = serde_json::to_value(&p).unwrap();
    let verify = async {
        let event = expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        assert_eq!(event["reason"], "Applied");
        assert_eq!(event["type"], "Normal");
        let status = expect(
            &mut api,
            Method::PATCH,
            &format!("{PRESET_PATH}/status"),
            Some(answer),
        )
        .await;
        status
    };
    let (action, status) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(p), ctx.clone()),
        verify
    );
    assert_eq!(action.unwrap(), Action::requeue(Duration::from_secs(300)));
    assert_eq!(status["kind"], "CropPreset");
    assert_eq!(status["status"]["observedGeneration"], 3);
    let ready = &status["status"]["conditions"][0];
    assert_eq!(
        (ready["type"].as_str(), ready["status"].as_str()),
        (Some("Ready"), Some("True"))
    );
    assert_eq!(status["status"]["rerender"]["generation"], 3);
    let presets = Resources {
        repo: ctx.repo.clone(),
    }
    .presets()
    .await
    .unwrap();
    assert_eq!(
        presets.iter().map(|p| p.code.as_str()).collect::<Vec<_>>(),
        ["square"]
    );
}

#[tokio::test]
async fn a_preset_reusing_another_ones_code_is_reported_not_retried() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let other = lightbox_core::domain::crop::CropSpec::new("square", 10, 10, Default::default());
    ctx.resources
        .apply_preset("k8s/photos/older", &other)
        .await
        .unwrap();
    let p = preset("square", true, false);
    let answer = serde_json::to_value(&p).unwrap();
    let verify = async {
        let event = expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        assert_eq!(
            (event["reason"].as_str(), event["type"].as_str()),
            (Some("Invalid"), Some("Warning"))
        );
        expect(
            &mut api,
            Method::PATCH,
            &format!("{PRESET_PATH}/status"),
            Some(answer),
        )
        .await
    };
    let (action, status) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(p), ctx.clone()),
        verify
    );
    assert_eq!(action.unwrap(), Action::await_change());
    let ready = &status["status"]["conditions"][0];
    assert_eq!(
        (ready["status"].as_str(), ready["reason"].as_str()),
        (Some("False"), Some("Invalid"))
    );
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .contains("k8s/photos/older"),
        "{ready}"
    );
}

#[tokio::test]
async fn a_deleted_preset_is_removed_then_released() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let spec = lightbox_core::domain::crop::CropSpec::new("square", 600, 600, Default::default());
    ctx.resources
        .apply_preset("k8s/photos/square", &spec)
        .await
        .unwrap();
    let p = preset("square", true, true);
    let released = serde_json::to_value(preset("square", false, true)).unwrap();
    let verify = async {
        let event = expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        assert_eq!(event["reason"], "Removed");
        expect(&mut api, Method::PATCH, PRESET_PATH, Some(released)).await
    };
    let (action, patch) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(p), ctx.clone()),
        verify
    );
    assert_eq!(action.unwrap(), Action::await_change());
    assert!(
        patch.to_string().contains("remove") || patch.to_string().contains("replace"),
        "{patch}"
    );
    assert!(ctx.repo.resources("crop_preset").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_render_quota_is_applied_and_its_status_written() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let mut q = RenderQuota::new(
        "default",
        RenderQuotaSpec {
            max_pixels: 5000,
            max_pending_per_owner: 10,
            max_renders_per_minute_per_owner: 60,
        },
    );
    q.metadata.namespace = Some("photos".into());
    q.metadata.generation = Some(1);
    q.metadata.finalizers = Some(vec![FINALIZER.into()]);
    let answer = serde_json::to_value(&q).unwrap();
    let path = "/apis/lightbox.dev/v1/namespaces/photos/renderquotas/default";
    let verify = async {
        expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        expect(
            &mut api,
            Method::PATCH,
            &format!("{path}/status"),
            Some(answer),
        )
        .await
    };
    let (action, status) = tokio::join!(
        reconcile::reconcile_render_quota(Arc::new(q), ctx.clone()),
        verify
    );
    assert_eq!(action.unwrap(), Action::requeue(Duration::from_secs(300)));
    assert_eq!(status["status"]["conditions"][0]["status"], "True");
    assert_eq!(ctx.resources.max_pixels().await.unwrap(), 5000);
}

#[tokio::test]
async fn the_error_policy_backs_off_more_after_each_failure() {
    let Fixture { ctx, _dir, .. } = fixture().await;
    let p = Arc::new(preset("square", true, false));
    let err = || Error::NoNamespace;
    let first = error_policy(p.clone(), &err(), ctx.clone());
    let second = error_policy(p.clone(), &err(), ctx.clone());
    let third = error_policy(p, &err(), ctx);
    assert_eq!(first, Action::requeue(Duration::from_secs(1)));
    assert_eq!(second, Action::requeue(Duration::from_secs(2)));
    assert_eq!(third, Action::requeue(Duration::from_secs(4)));
}

#[tokio::test]
async fn a_ready_condition_keeps_its_transition_time_until_the_status_changes() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let then = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2026-01-02T03:04:05Z".parse().unwrap(),
    );
    let mut p = preset("square", true, false);
    p.status = Some(lightbox_controller::resources::CropPresetStatus {
        observed_generation: Some(2),
        conditions: vec![lightbox_controller::plan::ready_condition(
            true,
            "Applied",
            "before",
            Some(2),
            &[],
        )],
        rerender: None,
    });
    p.status.as_mut().unwrap().conditions[0].last_transition_time = then.clone();
    let answer = serde_json::to_value(&p).unwrap();
    let verify = async {
        expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        expect(
            &mut api,
            Method::PATCH,
            &format!("{PRESET_PATH}/status"),
            Some(answer),
        )
        .await
    };
    let (action, status) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(p), ctx.clone()),
        verify
    );
    action.unwrap();
    let ready = &status["status"]["conditions"][0];
    assert_eq!(ready["status"], "True");
    assert_eq!(ready["observedGeneration"], 3);
    assert_eq!(
        ready["lastTransitionTime"],
        serde_json::to_value(&then).unwrap(),
        "still ready: the transition time stays"
    );

    // Refused (its code taken by another preset): False, and the time moves.
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let mut refused = preset("square", true, false);
    refused.status = Some(lightbox_controller::resources::CropPresetStatus {
        conditions: vec![serde_json::from_value(ready.clone()).unwrap()],
        ..Default::default()
    });
    let other = lightbox_core::domain::crop::CropSpec::new("square", 10, 10, Default::default());
    ctx.resources
        .apply_preset("k8s/photos/older", &other)
        .await
        .unwrap();
    let answer = serde_json::to_value(&refused).unwrap();
    let verify = async {
        expect(&mut api, Method::POST, EVENTS_PATH, None).await;
        expect(
            &mut api,
            Method::PATCH,
            &format!("{PRESET_PATH}/status"),
            Some(answer),
        )
        .await
    };
    let (_, status) = tokio::join!(
        reconcile::reconcile_preset(Arc::new(refused), ctx.clone()),
        verify
    );
    let ready = &status["status"]["conditions"][0];
    assert_eq!(ready["status"], "False");
    assert_ne!(
        ready["lastTransitionTime"],
        serde_json::to_value(&then).unwrap()
    );
}

/// Answers the next request with `code` and `reply`; returns its body.
async fn answer(api: &mut Handle, method: Method, path: &str, code: u16, reply: Value) -> Value {
    let (req, send) = tokio::time::timeout(Duration::from_secs(5), api.next_request())
        .await
        .unwrap_or_else(|_| panic!("no request came; expected {method} {path}"))
        .expect("the client hung up");
    assert_eq!((req.method(), req.uri().path()), (&method, path));
    assert!(lightbox_controller::rbac::listed(method.as_str(), path));
    let bytes = req.into_body().collect_bytes().await.unwrap();
    send.send_response(
        Response::builder()
            .status(code)
            .body(Body::from(serde_json::to_vec(&reply).unwrap()))
            .unwrap(),
    );
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn not_found() -> Value {
    serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": "NotFound", "code": 404, "message": "not found"})
}

fn lease(holder: &str) -> Value {
    serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "team-a-lightbox-controller", "namespace": "team-a", "resourceVersion": "4"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                 "renewTime": "2026-01-02T03:04:05.000000Z"}
    })
}

#[tokio::test]
async fn each_release_elects_on_its_own_lease_and_hands_it_back_on_shutdown() {
    let (svc, mut api) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(svc, "default");
    let lock = LeaseLock::new(client, "team-a", "team-a-lightbox-controller", "pod-1");
    let named = "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/team-a-lightbox-controller";
    let verify = async {
        answer(&mut api, Method::GET, named, 404, not_found()).await;
        let created = answer(
            &mut api,
            Method::POST,
            "/apis/coordination.k8s.io/v1/namespaces/team-a/leases",
            201,
            lease("pod-1"),
        )
        .await;
        assert_eq!(created["metadata"]["name"], "team-a-lightbox-controller");
        assert_eq!(created["spec"]["holderIdentity"], "pod-1");
    };
    let (held, ()) = tokio::join!(lock.try_hold(), verify);
    assert!(held.unwrap());

    let verify = async {
        answer(&mut api, Method::GET, named, 200, lease("pod-1")).await;
        let released = answer(&mut api, Method::PUT, named, 200, lease("")).await;
        assert!(released["spec"]["holderIdentity"].is_null(), "{released}");
        assert_eq!(released["spec"]["leaseDurationSeconds"], 1);
        assert_eq!(
            released["metadata"]["resourceVersion"], "4",
            "a conditional write"
        );
    };
    let (released, ()) = tokio::join!(lock.release(), verify);
    released.unwrap();

    // A lease someone else holds by now is left alone.
    let verify = answer(&mut api, Method::GET, named, 200, lease("pod-2"));
    let (released, _) = tokio::join!(lock.release(), verify);
    released.unwrap();
    let extra = tokio::time::timeout(Duration::from_millis(200), api.next_request()).await;
    assert!(extra.is_err(), "no write to another replica's lease");
}

/// The lists the controllers start with, until `want` distinct paths came.
async fn first_lists(api: &mut Handle, want: usize) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    let mut held = Vec::new();
    while paths.len() < want {
        let (req, send) = tokio::time::timeout(Duration::from_secs(10), api.next_request())
            .await
            .expect("the controllers stopped listing")
            .expect("the client hung up");
        let path = req.uri().path().to_owned();
        assert!(lightbox_controller::rbac::listed("GET", &path), "{path}");
        if req.uri().query().unwrap_or("").contains("watch=true") {
            held.push(send); // a watch: left open
            continue;
        }
        let kind = if path.ends_with("croppresets") {
            "CropPresetList"
        } else if path.ends_with("aliaslimits") {
            "AliasLimitList"
        } else {
            "RenderQuotaList"
        };
        let list = serde_json::json!({"apiVersion": "lightbox.dev/v1", "kind": kind,
            "metadata": {"resourceVersion": "1"}, "items": []});
        send.send_response(
            Response::builder()
                .body(Body::from(serde_json::to_vec(&list).unwrap()))
                .unwrap(),
        );
        paths.insert(path);
    }
    paths
}

#[tokio::test]
async fn the_controllers_watch_only_their_namespaces() {
    let Fixture { ctx, mut api, _dir } = fixture().await;
    let scope = Scope::parse("team-b,team-b-staging");
    let running = tokio::spawn(lightbox_controller::controllers(ctx.clone(), &scope));
    let paths = first_lists(&mut api, 6).await;
    running.abort();
    let mut want = BTreeSet::new();
    for ns in ["team-b", "team-b-staging"] {
        for plural in ["croppresets", "aliaslimits", "renderquotas"] {
            want.insert(format!("/apis/lightbox.dev/v1/namespaces/{ns}/{plural}"));
        }
    }
    assert_eq!(paths, want, "never a cluster-wide list");

    let Fixture { ctx, mut api, _dir } = fixture().await;
    let running = tokio::spawn(lightbox_controller::controllers(ctx, &Scope::All));
    let paths = first_lists(&mut api, 3).await;
    running.abort();
    assert!(
        paths.contains("/apis/lightbox.dev/v1/croppresets"),
        "{paths:?}"
    );
}
