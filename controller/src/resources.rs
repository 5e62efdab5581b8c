//! The custom resources ops declare (group `lightbox.dev`, version `v1`,
//! namespaced). Their validation lives in the schema itself, so the API
//! server refuses a bad resource before the controller sees it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, CustomResourceExt, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Fill,
    Fit,
    Pad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Webp,
    Jpg,
    Png,
    Avif,
}

// Where a `fill` preset cuts (absent: centre). A plain comment: a doc
// comment would become the schema's description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Focus {
    Center,
    Top,
    Bottom,
    Left,
    Right,
    Smart,
}

fn default_quality() -> u8 {
    80
}

/// A render every image gets.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[kube(
    group = "lightbox.dev",
    version = "v1",
    kind = "CropPreset",
    namespaced,
    status = "CropPresetStatus",
    shortname = "cpreset",
    category = "lightbox",
    printcolumn = r#"{"name":"Code","type":"string","jsonPath":".spec.code"}"#,
    printcolumn = r#"{"name":"Width","type":"integer","jsonPath":".spec.width"}"#,
    printcolumn = r#"{"name":"Height","type":"integer","jsonPath":".spec.height"}"#,
    printcolumn = r#"{"name":"Mode","type":"string","jsonPath":".spec.mode"}"#,
    printcolumn = r#"{"name":"Format","type":"string","jsonPath":".spec.format"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[x_kube(validation = Rule::new("self.width > 0 || self.height > 0").message("at least one of width and height must be positive"))]
pub struct CropPresetSpec {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,31}$"))]
    pub code: String,
    #[schemars(range(min = 0, max = 15000))]
    pub width: u32,
    #[schemars(range(min = 0, max = 15000))]
    pub height: u32,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub format: Format,
    #[serde(default = "default_quality")]
    #[schemars(range(min = 1, max = 100))]
    pub quality: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CropPresetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// One per type: server-side apply merges them by `type`.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerender: Option<RerenderStatus>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RerenderStatus {
    /// The spec generation this re-render brings images up to.
    pub generation: i64,
    /// Images still off this spec at the last round.
    pub remaining: u64,
    /// Images handed to the render queue so far for this generation.
    pub queued: u64,
}

fn default_alias_limit() -> u32 {
    20
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, JsonSchema)]
pub struct AliasOverride {
    #[schemars(length(min = 3, max = 254), regex(pattern = r"^[^@\s]+@[^@\s]+$"))]
    pub email: String,
    #[schemars(range(max = 10000))]
    pub limit: u32,
}

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[kube(
    group = "lightbox.dev",
    version = "v1",
    kind = "AliasLimit",
    namespaced,
    status = "SimpleStatus",
    shortname = "alimit",
    category = "lightbox",
    printcolumn = r#"{"name":"Default","type":"integer","jsonPath":".spec.default"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct AliasLimitSpec {
    #[serde(default = "default_alias_limit")]
    #[schemars(range(max = 10000))]
    pub default: u32,
    #[serde(default)]
    pub overrides: Vec<AliasOverride>,
}

#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[kube(
    group = "lightbox.dev",
    version = "v1",
    kind = "RenderQuota",
    namespaced,
    status = "SimpleStatus",
    shortname = "rquota",
    category = "lightbox",
    printcolumn = r#"{"name":"Max Pixels","type":"integer","jsonPath":".spec.maxPixels"}"#,
    printcolumn = r#"{"name":"Pending","type":"integer","jsonPath":".spec.maxPendingPerOwner"}"#,
    printcolumn = r#"{"name":"Per Minute","type":"integer","jsonPath":".spec.maxRendersPerMinutePerOwner"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct RenderQuotaSpec {
    #[schemars(range(min = 1))]
    pub max_pixels: u64,
    #[schemars(range(min = 1))]
    pub max_pending_per_owner: u64,
    #[schemars(range(min = 1))]
    pub max_renders_per_minute_per_owner: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SimpleStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// One per type: server-side apply merges them by `type`.
    #[serde(default)]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![CropPreset::crd(), AliasLimit::crd(), RenderQuota::crd()]
}

impl From<Mode> for lightbox_core::domain::crop::Mode {
    fn from(m: Mode) -> Self {
        use lightbox_core::domain::crop::Mode as M;
        match m {
            Mode::Fill => M::Fill,
            Mode::Fit => M::Fit,
            Mode::Pad => M::Pad,
        }
    }
}

impl From<Format> for lightbox_core::domain::crop::Format {
    fn from(f: Format) -> Self {
        use lightbox_core::domain::crop::Format as F;
        match f {
            Format::Webp => F::Webp,
            Format::Jpg => F::Jpg,
            Format::Png => F::Png,
            Format::Avif => F::Avif,
        }
    }
}

impl From<Focus> for lightbox_core::domain::focus::Focus {
    fn from(f: Focus) -> Self {
        use lightbox_core::domain::focus::Focus as F;
        match f {
            Focus::Center => F::Center,
            Focus::Top => F::Top,
            Focus::Bottom => F::Bottom,
            Focus::Left => F::Left,
            Focus::Right => F::Right,
            Focus::Smart => F::Smart,
        }
    }
}

impl From<&CropPresetSpec> for lightbox_core::domain::crop::CropSpec {
    fn from(s: &CropPresetSpec) -> Self {
        lightbox_core::domain::crop::CropSpec {
            code: s.code.clone(),
            width: s.width,
            height: s.height,
            mode: s.mode.into(),
            format: s.format.into(),
            quality: s.quality,
            focus: s.focus.map(Into::into),
            at: None,
        }
    }
}

impl From<&AliasLimitSpec> for lightbox_core::config::AliasLimit {
    fn from(s: &AliasLimitSpec) -> Self {
        lightbox_core::config::AliasLimit {
            default: s.default,
            overrides: s
                .overrides
                .iter()
                .map(|o| lightbox_core::config::AliasOverride {
                    email: o.email.clone(),
                    limit: o.limit,
                })
                .collect(),
        }
    }
}

impl From<&RenderQuotaSpec> for lightbox_core::config::RenderQuota {
    fn from(s: &RenderQuotaSpec) -> Self {
        lightbox_core::config::RenderQuota {
            max_pixels: s.max_pixels,
            max_pending_per_owner: Some(s.max_pending_per_owner),
            max_renders_per_minute_per_owner: Some(s.max_renders_per_minute_per_owner),
        }
    }
}

/// The three CRDs as YAML documents, as `lightbox-controller crds` prints
/// them and `crds/` holds them.
pub fn crds_yaml() -> Vec<(String, String)> {
    crds()
        .into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let yaml = serde_saphyr::to_string(&crd).expect("a CRD serializes");
            (format!("{name}.yaml"), yaml)
        })
        .collect()
}
