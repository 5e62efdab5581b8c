//! The library's error type (`lightbox_domain::error`), and how the errors
//! of the database and the blob store become it. The pure domain cannot
//! name those errors, and Rust's orphan rule keeps their `From` out of
//! this crate, so they convert at the `?` with `.or_internal()`.

pub use lightbox_domain::error::{Error, FieldError, Result};

/// An infrastructure failure as `Error::Internal`, saying where it failed.
pub trait OrInternal<T> {
    fn or_internal(self) -> Result<T>;
}

impl<T> OrInternal<T> for std::result::Result<T, sqlx::Error> {
    fn or_internal(self) -> Result<T> {
        self.map_err(|e| Error::Internal(anyhow::Error::new(e).context("database")))
    }
}

impl<T> OrInternal<T> for std::result::Result<T, object_store::Error> {
    fn or_internal(self) -> Result<T> {
        self.map_err(store_failure)
    }
}

/// A blob store failure as `Error::Internal`.
pub fn store_failure(e: object_store::Error) -> Error {
    Error::Internal(anyhow::Error::new(e).context("blob store"))
}
