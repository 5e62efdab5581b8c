//! The library's error type (`domain::error`) and the conversions from the
//! errors of the database and the blob store, which the pure domain cannot
//! name.

pub use crate::domain::error::{Error, FieldError, Result};

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
