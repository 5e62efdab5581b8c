//! Storage of the operator's resources (see `crate::resources`).

use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

#[async_trait]
pub trait ResourceRepo {
    /// Inserts or replaces; true when the stored spec changed.
    async fn put_resource(&self, kind: &str, name: &str, spec: &str, now: i64) -> Result<bool>;
    /// True when there was one.
    async fn delete_resource(&self, kind: &str, name: &str) -> Result<bool>;
    /// (name, spec JSON) of a kind, by name.
    async fn resources(&self, kind: &str) -> Result<Vec<(String, String)>>;
    /// (image, owner) of every image whose render `code` is missing or has another spec.
    async fn off_spec_with_owner(&self, code: &str, spec: &str) -> Result<Vec<(Uuid, Uuid)>>;
    /// Images that have a render with this code.
    async fn images_with_render(&self, code: &str) -> Result<Vec<Uuid>>;
    /// (owner, images waiting: still processing or in the outbox).
    async fn pending_by_owner(&self) -> Result<Vec<(Uuid, i64)>>;
    /// The spec of preset `code` whose re-render backlog is queued.
    async fn backlog_queued(&self, code: &str) -> Result<Option<String>>;
    /// Records it; `None` forgets it (the preset is gone).
    async fn set_backlog_queued(&self, code: &str, spec: Option<&str>) -> Result<()>;
}
