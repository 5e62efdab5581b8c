//! The one error type of the library. Every variant knows its JSON-RPC code,
//! so the transport maps errors in one place and never leaks internals.

use serde::Serialize;
use serde_json::{json, Value};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unauthorized")]
    Unauthorized { retry_after_s: Option<u64> },
    #[error("forbidden")]
    Forbidden,
    #[error("not_found")]
    NotFound,
    #[error("validation_failed")]
    Validation(Vec<FieldError>),
    #[error("cursor_stale")]
    CursorStale,
    #[error("taken_down")]
    TakenDown,
    #[error("download_not_ready")]
    DownloadNotReady { state: &'static str },
    #[error("custom_crop_limit_exceeded")]
    CustomCropLimit,
    #[error("rate_limited")]
    RateLimited { retry_after_s: u64 },
    #[error("timeout")]
    Timeout,
    #[error("internal error: {0:#}")]
    Internal(#[from] anyhow::Error),
}

impl Error {
    pub fn unauthorized() -> Self {
        Error::Unauthorized {
            retry_after_s: None,
        }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Error::Validation(vec![FieldError {
            field: field.to_owned(),
            message: message.into(),
        }])
    }

    pub fn code(&self) -> i64 {
        match self {
            Error::Unauthorized { .. } => 1001,
            Error::Forbidden => 1003,
            Error::NotFound => 2001,
            Error::Validation(_) => 2002,
            Error::CursorStale => 2003,
            Error::TakenDown => 2004,
            Error::DownloadNotReady { .. } => 2006,
            Error::CustomCropLimit => 4001,
            Error::RateLimited { .. } => 4002,
            Error::Timeout => 5001,
            Error::Internal(_) => -32603,
        }
    }

    /// The public message: the contract's word for the code, never a detail.
    pub fn message(&self) -> &'static str {
        match self {
            Error::Unauthorized { .. } => "unauthorized",
            Error::Forbidden => "forbidden",
            Error::NotFound => "not_found",
            Error::Validation(_) => "validation_failed",
            Error::CursorStale => "cursor_stale",
            Error::TakenDown => "taken_down",
            Error::DownloadNotReady { .. } => "download_not_ready",
            Error::CustomCropLimit => "custom_crop_limit_exceeded",
            Error::RateLimited { .. } => "rate_limited",
            Error::Timeout => "timeout",
            Error::Internal(_) => "internal_error",
        }
    }

    pub fn data(&self) -> Value {
        match self {
            Error::Unauthorized {
                retry_after_s: Some(s),
            } => json!({ "retry_after_s": s }),
            Error::Validation(errors) => json!({ "errors": errors }),
            Error::DownloadNotReady { state } => json!({ "state": state }),
            Error::RateLimited { retry_after_s } => json!({ "retry_after_s": retry_after_s }),
            _ => json!({}),
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        Error::Internal(anyhow::Error::new(e).context("database"))
    }
}

impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        Error::Internal(anyhow::Error::new(e).context("blob store"))
    }
}
