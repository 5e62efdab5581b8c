//! The one error type of the library. Every variant knows its JSON-RPC code,
//! so the transport maps errors in one place and never leaks internals.
//! (The conversions from the database's and the store's errors live beside
//! them, in `crate::error`.)

use super::downloads::DownloadState;
use serde::Serialize;
use serde_json::{json, Value};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// The contract's word for an error code (`internal_error` for any code
/// it does not name).
pub fn message_of(code: i64) -> &'static str {
    match code {
        1001 => "unauthorized",
        1003 => "forbidden",
        2001 => "not_found",
        2002 => "validation_failed",
        2003 => "cursor_stale",
        2004 => "taken_down",
        2006 => "download_not_ready",
        4001 => "custom_crop_limit_exceeded",
        4002 => "rate_limited",
        5001 => "timeout",
        _ => "internal_error",
    }
}

wire_enum! {
    /// Why a call is 1001: error `data.reason`.
    pub enum AuthFailure {
        /// No credential where one is needed.
        Missing = "missing",
        /// Not a credential Lightbox issued: bad shape or signature, or
        /// unknown.
        Malformed = "malformed",
        Expired = "expired",
        /// Revoked, or its session ended.
        Revoked = "revoked",
        Throttled = "throttled",
        /// A login or re-authentication with a wrong email or password.
        WrongCredentials = "wrong_credentials",
    }
}

wire_enum! {
    /// Why a call is 1003 for lack of a right: error `data.reason`, with
    /// the scope or role it needs in `data.required`.
    pub enum Denial {
        /// A personal access token without the scope (`write`), or one used
        /// where only a session will do (`session`).
        Scope = "scope",
        /// The caller is not an admin.
        Role = "role",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unauthorized")]
    Unauthorized {
        reason: AuthFailure,
        retry_after_s: Option<u64>,
    },
    /// A login refused before its password was checked (1001).
    #[error("throttled")]
    Throttled { retry_after_s: u64 },
    #[error("forbidden")]
    Forbidden,
    /// 1003 for a missing scope or role.
    #[error("forbidden")]
    Denied {
        reason: Denial,
        required: &'static str,
    },
    #[error("not_found")]
    NotFound,
    #[error("validation_failed")]
    Validation(Vec<FieldError>),
    #[error("cursor_stale")]
    CursorStale,
    #[error("taken_down")]
    TakenDown,
    #[error("download_not_ready")]
    DownloadNotReady { state: DownloadState },
    #[error("custom_crop_limit_exceeded")]
    CustomCropLimit,
    /// A new crop rule on a folder that has `limit` already: the same
    /// code and message as a sixth custom crop, with the limit in `data`.
    #[error("custom_crop_limit_exceeded")]
    AlbumRuleLimit { limit: usize },
    #[error("rate_limited")]
    RateLimited { retry_after_s: u64 },
    #[error("timeout")]
    Timeout,
    #[error("internal error: {0:#}")]
    Internal(#[from] anyhow::Error),
}

impl Error {
    /// 1001, saying why.
    pub fn auth(reason: AuthFailure) -> Self {
        Error::Unauthorized {
            reason,
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
            Error::Unauthorized { .. } | Error::Throttled { .. } => 1001,
            Error::Forbidden | Error::Denied { .. } => 1003,
            Error::NotFound => 2001,
            Error::Validation(_) => 2002,
            Error::CursorStale => 2003,
            Error::TakenDown => 2004,
            Error::DownloadNotReady { .. } => 2006,
            Error::CustomCropLimit | Error::AlbumRuleLimit { .. } => 4001,
            Error::RateLimited { .. } => 4002,
            Error::Timeout => 5001,
            Error::Internal(_) => -32603,
        }
    }

    /// The public message: the contract's word for the code, never a detail.
    pub fn message(&self) -> &'static str {
        message_of(self.code())
    }

    pub fn data(&self) -> Value {
        match self {
            Error::Unauthorized {
                reason,
                retry_after_s: Some(s),
            } => json!({ "retry_after_s": s, "reason": reason.as_str() }),
            Error::Unauthorized { reason, .. } => json!({ "reason": reason.as_str() }),
            Error::Denied { reason, required } => {
                json!({ "reason": reason.as_str(), "required": required })
            }
            Error::Throttled { retry_after_s } => {
                json!({ "retry_after_s": retry_after_s, "reason": "throttled" })
            }
            Error::Validation(errors) => json!({ "errors": errors }),
            Error::DownloadNotReady { state } => json!({ "state": state.as_str() }),
            Error::RateLimited { retry_after_s } => json!({ "retry_after_s": retry_after_s }),
            Error::AlbumRuleLimit { limit } => json!({
                "limit": limit,
                "detail": format!("a folder holds at most {limit} crop rules"),
            }),
            _ => json!({}),
        }
    }
}
