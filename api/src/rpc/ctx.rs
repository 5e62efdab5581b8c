//! What one RPC handler gets. Its own module, so that the handlers, the
//! method table and the dispatcher all depend on it and not on each other.

use crate::state::AppState;
use lightbox_core::auth::Caller;
use lightbox_core::domain::error::AuthFailure;
use lightbox_core::{Error, Result};

/// What one handler gets: the state, the caller when the method needs one,
/// and the client's address.
#[derive(Clone)]
pub struct Ctx {
    pub state: AppState,
    caller: Option<Caller>,
    pub client: String,
}

impl Ctx {
    pub fn new(state: AppState, caller: Option<Caller>, client: String) -> Ctx {
        Ctx {
            state,
            caller,
            client,
        }
    }

    /// The authenticated caller; the table guarantees one for non-public methods.
    pub fn caller(&self) -> Result<&Caller> {
        self.caller
            .as_ref()
            .ok_or(Error::auth(AuthFailure::Missing))
    }
}
