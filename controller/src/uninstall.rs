//! `lightbox-controller uninstall`, the chart's pre-delete hook. It runs
//! while the controller still does: the release's own resources are
//! deleted first, so the controller removes what they applied and releases
//! their finalizers; then any resource still being deleted with the
//! finalizer (not released in time) loses it, because once the controller
//! is gone nothing could release it and it (and its namespace) would hang
//! in Terminating. Live resources made outside the chart are left alone:
//! the running controller would only put the finalizer back (the chart's
//! README says to delete them before uninstalling). Every write goes to
//! the object's own namespace, whatever the watch scope.

use crate::reconcile::FINALIZER;
use crate::resources::{AliasLimit, CropPreset, RenderQuota};
use crate::scope::Scope;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;
use std::fmt::Debug;
use std::time::{Duration, Instant};

/// Polling interval while waiting for the controller.
const POLL: Duration = Duration::from_secs(2);

pub async fn run(
    client: kube::Client,
    scope: &Scope,
    release: &str,
    wait: Duration,
) -> anyhow::Result<()> {
    let selector = format!("app.kubernetes.io/instance={release}");
    let deadline = Instant::now() + wait;
    release_kind::<CropPreset>(&client, scope, &selector, deadline).await?;
    release_kind::<AliasLimit>(&client, scope, &selector, deadline).await?;
    release_kind::<RenderQuota>(&client, scope, &selector, deadline).await?;
    Ok(())
}

async fn release_kind<K>(
    client: &kube::Client,
    scope: &Scope,
    selector: &str,
    deadline: Instant,
) -> anyhow::Result<()>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug,
{
    let ours = ListParams::default().labels(selector);
    for api in scope.apis::<K>(client) {
        for obj in api.list(&ours).await? {
            if obj.meta().deletion_timestamp.is_none() {
                let own = own_namespace::<K>(client, &obj);
                ignore_gone(own.delete(&obj.name_any(), &DeleteParams::default()).await)?;
            }
        }
        while Instant::now() < deadline && !api.list(&ours).await?.items.is_empty() {
            tokio::time::sleep(POLL).await;
        }
        for obj in api.list(&ListParams::default()).await? {
            if obj.meta().deletion_timestamp.is_some() {
                drop_finalizer(&own_namespace::<K>(client, &obj), &obj).await?;
            }
        }
    }
    Ok(())
}

/// The API of the object's own namespace: a cluster-wide handle would
/// address a namespaced object without its namespace (404).
fn own_namespace<K>(client: &kube::Client, obj: &K) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
{
    Api::namespaced(client.clone(), &obj.namespace().unwrap_or_default())
}

async fn drop_finalizer<K>(api: &Api<K>, obj: &K) -> anyhow::Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let left: Vec<String> = obj
        .finalizers()
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    if left.len() == obj.finalizers().len() {
        return Ok(());
    }
    tracing::warn!(name = %obj.name_any(), "releasing a finalizer the controller did not release");
    // The resourceVersion makes this a no-op if the object changed meanwhile.
    let patch = json!({ "metadata": {
        "finalizers": left,
        "resourceVersion": obj.resource_version(),
    }});
    let result = api
        .patch(
            &obj.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await;
    ignore_gone(result)
}

fn ignore_gone<T>(r: Result<T, kube::Error>) -> anyhow::Result<()> {
    match r {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}
