//! The reconcilers: each resource kind applied to the database through the
//! shared library (`lightbox_core::resources`), its status written by
//! server-side apply, what happened told as Kubernetes events. A
//! CropPreset also feeds its re-render backlog to the queue, paced by the
//! RenderQuota, and carries a finalizer so that deleting it removes its
//! renders.

use crate::plan::{self, backoff, preset_round, ready_condition, resource_name};
use crate::resources::{AliasLimit, CropPreset, RenderQuota, SimpleStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::finalizer::{finalizer, Event as Finalize};
use kube::{Resource, ResourceExt};
use lightbox_core::db::DynRepo;
use lightbox_core::metrics::METRICS;
use lightbox_core::resources::{Resources, ALIAS_LIMIT, RENDER_QUOTA};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

pub const FINALIZER: &str = "lightbox.dev/cleanup";
pub const MANAGER: &str = "lightbox-controller";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("kubernetes: {0}")]
    Kube(#[from] kube::Error),
    #[error("lightbox: {0}")]
    Lightbox(#[from] lightbox_core::Error),
    #[error("finalizer: {0}")]
    Finalizer(Box<kube::runtime::finalizer::Error<Error>>),
    #[error("resource without a namespace")]
    NoNamespace,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

pub struct Context {
    pub client: kube::Client,
    pub repo: DynRepo,
    pub resources: Resources,
    pub recorder: Recorder,
    /// Failures in a row per resource, for the error policy's backoff.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    pub fn new(client: kube::Client, repo: DynRepo, recorder: Recorder) -> Context {
        Context {
            client,
            resources: Resources { repo: repo.clone() },
            repo,
            recorder,
            failures: Mutex::default(),
        }
    }

    fn succeeded(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    fn failed(&self, key: &str) -> u32 {
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = f.entry(key.to_owned()).or_default();
        *n += 1;
        *n - 1
    }
}

fn conditions(p: &CropPreset) -> &[Condition] {
    p.status.as_ref().map_or(&[], |s| &s.conditions)
}

/// The conditions of an AliasLimit or RenderQuota, read back generically.
fn simple_conditions<K: Serialize>(obj: &K) -> Vec<Condition> {
    serde_json::to_value(obj)
        .ok()
        .and_then(|v| serde_json::from_value::<SimpleStatus>(v["status"].clone()).ok())
        .map(|s| s.conditions)
        .unwrap_or_default()
}

fn key<K: Resource>(obj: &K) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

fn api<K>(ctx: &Context, obj: &K) -> Result<Api<K>>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    let ns = obj.namespace().ok_or(Error::NoNamespace)?;
    Ok(Api::namespaced(ctx.client.clone(), &ns))
}

/// Writes `status` by server-side apply, owned by this controller.
async fn apply_status<K>(ctx: &Context, obj: &K, status: serde_json::Value) -> Result<()>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug,
{
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    let pp = PatchParams::apply(MANAGER).force();
    api(ctx, obj)?
        .patch_status(&obj.name_any(), &pp, &Patch::Apply(&patch))
        .await?;
    Ok(())
}

async fn event<K: Resource<DynamicType = ()>>(
    ctx: &Context,
    obj: &K,
    ok: bool,
    reason: &str,
    note: String,
) {
    let ev = Event {
        type_: if ok {
            EventType::Normal
        } else {
            EventType::Warning
        },
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&ev, &obj.object_ref(&())).await {
        tracing::warn!(error = %e, "could not publish an event");
    }
}

/// Refusals of the shared library (a bad or conflicting spec) are the
/// resource's fault: reported in its status, not retried.
fn refusal(e: &lightbox_core::Error) -> Option<String> {
    match e {
        lightbox_core::Error::Validation(_) => Some(e.data().to_string()),
        _ => None,
    }
}

pub async fn reconcile_preset(p: Arc<CropPreset>, ctx: Arc<Context>) -> Result<Action> {
    let started = std::time::Instant::now();
    let api = api(&ctx, &*p)?;
    let result = finalizer(&api, FINALIZER, p, |ev| async {
        match ev {
            Finalize::Apply(p) => apply_preset(&p, &ctx).await,
            Finalize::Cleanup(p) => cleanup_preset(&p, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)));
    METRICS.reconcile("CropPreset", result.is_ok(), started.elapsed());
    result
}

async fn apply_preset(p: &CropPreset, ctx: &Context) -> Result<Action> {
    let ns = p.namespace().ok_or(Error::NoNamespace)?;
    let name = resource_name(&ns, &p.name_any());
    let generation = p.metadata.generation.unwrap_or(0);
    let spec: lightbox_core::domain::crop::CropSpec = (&p.spec).into();
    let changed = match ctx.resources.apply_preset(&name, &spec).await {
        Ok(changed) => changed,
        Err(e) => return refuse(p, ctx, e, generation, conditions(p)).await,
    };
    let backlog = ctx.resources.preset_backlog(&spec).await?;
    let pending: HashMap<Uuid, i64> = ctx.repo.pending_by_owner().await?.into_iter().collect();
    let quota = ctx.resources.render_quota().await?;
    let previous = p.status.as_ref().and_then(|s| s.rerender.as_ref());
    let round = preset_round(generation, previous, &backlog, &pending, quota.as_ref());
    if !round.batch.is_empty() {
        ctx.repo
            .outbox_add(&round.batch, lightbox_core::time::now_ms())
            .await?;
    }
    if changed {
        let note = format!(
            "preset {} applied; {} images to re-render",
            spec.code,
            backlog.len()
        );
        event(ctx, p, true, "Applied", note).await;
    }
    let status = json!({
        "observedGeneration": generation,
        "conditions": [ready_condition(true, "Applied", &round.message, Some(generation), conditions(p))],
        "rerender": round.rerender,
    });
    apply_status(ctx, p, status).await?;
    ctx.succeeded(&key(p));
    Ok(Action::requeue(round.requeue))
}

async fn refuse<K>(
    obj: &K,
    ctx: &Context,
    e: lightbox_core::Error,
    generation: i64,
    previous: &[Condition],
) -> Result<Action>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug,
{
    let Some(why) = refusal(&e) else {
        return Err(e.into());
    };
    event(ctx, obj, false, "Invalid", why.clone()).await;
    let status = json!({
        "observedGeneration": generation,
        "conditions": [ready_condition(false, "Invalid", &why, Some(generation), previous)],
    });
    apply_status(ctx, obj, status).await?;
    Ok(Action::await_change())
}

async fn cleanup_preset(p: &CropPreset, ctx: &Context) -> Result<Action> {
    let ns = p.namespace().ok_or(Error::NoNamespace)?;
    let images = ctx
        .resources
        .delete_preset(&resource_name(&ns, &p.name_any()))
        .await?;
    // Each image's render job drops the render it no longer should have.
    ctx.repo
        .outbox_add(&images, lightbox_core::time::now_ms())
        .await?;
    let note = format!(
        "preset {} removed from {} images",
        p.spec.code,
        images.len()
    );
    event(ctx, p, true, "Removed", note).await;
    Ok(Action::await_change())
}

/// AliasLimit and RenderQuota: applied on change; the finalizer lets the
/// controller see a deletion and remove the row.
async fn reconcile_simple<K, F>(
    obj: Arc<K>,
    ctx: Arc<Context>,
    kind: &str,
    apply: F,
) -> Result<Action>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
    F: for<'a> FnOnce(
        &'a Resources,
        &'a str,
    ) -> futures::future::BoxFuture<'a, lightbox_core::Result<bool>>,
{
    let started = std::time::Instant::now();
    let ns = obj.namespace().ok_or(Error::NoNamespace)?;
    let name = resource_name(&ns, &obj.name_any());
    let api = api(&ctx, &*obj)?;
    let result = finalizer(&api, FINALIZER, obj, |ev| async {
        match ev {
            Finalize::Apply(obj) => {
                let generation = obj.meta().generation.unwrap_or(0);
                let previous = simple_conditions(&*obj);
                match apply(&ctx.resources, &name).await {
                    Ok(changed) => {
                        if changed {
                            event(
                                &ctx,
                                &*obj,
                                true,
                                "Applied",
                                format!("{} applied", K::kind(&())),
                            )
                            .await;
                        }
                        let status = SimpleStatus {
                            observed_generation: Some(generation),
                            conditions: vec![ready_condition(
                                true,
                                "Applied",
                                "in effect",
                                Some(generation),
                                &previous,
                            )],
                        };
                        apply_status(
                            &ctx,
                            &*obj,
                            serde_json::to_value(status).unwrap_or_default(),
                        )
                        .await?;
                        ctx.succeeded(&key(&*obj));
                        Ok(Action::requeue(plan::RESYNC))
                    }
                    Err(e) => refuse(&*obj, &ctx, e, generation, &previous).await,
                }
            }
            Finalize::Cleanup(obj) => {
                ctx.resources.delete(kind, &name).await?;
                event(
                    &ctx,
                    &*obj,
                    true,
                    "Removed",
                    format!("{} removed", K::kind(&())),
                )
                .await;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)));
    METRICS.reconcile(K::kind(&()).as_ref(), result.is_ok(), started.elapsed());
    result
}

pub async fn reconcile_alias_limit(obj: Arc<AliasLimit>, ctx: Arc<Context>) -> Result<Action> {
    let spec: lightbox_core::config::AliasLimit = (&obj.spec).into();
    reconcile_simple(obj, ctx, ALIAS_LIMIT, move |r, name| {
        Box::pin(async move { r.apply_alias_limit(name, &spec).await })
    })
    .await
}

pub async fn reconcile_render_quota(obj: Arc<RenderQuota>, ctx: Arc<Context>) -> Result<Action> {
    let spec: lightbox_core::config::RenderQuota = (&obj.spec).into();
    reconcile_simple(obj, ctx, RENDER_QUOTA, move |r, name| {
        Box::pin(async move { r.apply_render_quota(name, &spec).await })
    })
    .await
}

/// Retries a failed resource with a doubling delay (1 s … 5 min).
pub fn error_policy<K: Resource>(obj: Arc<K>, error: &Error, ctx: Arc<Context>) -> Action {
    let failures = ctx.failed(&key(&*obj));
    tracing::warn!(resource = %key(&*obj), %error, failures = failures + 1, "reconcile failed");
    Action::requeue(backoff(failures))
}
