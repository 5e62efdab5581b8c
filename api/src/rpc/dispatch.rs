//! Running calls: access rules from the method table, the per-call time
//! cap, panics contained, and at most four calls of a batch at once.

use super::ctx::{Ctx, Origin};
use super::discover;
use super::envelope::{self, Call, Entry, METHOD_NOT_FOUND};
use super::methods::{self, Access};
use crate::state::AppState;
use futures::{FutureExt, StreamExt};
use lightbox_core::auth::{Caller, Via};
use lightbox_core::domain::error::{AuthFailure, Denial};
use lightbox_core::metrics::METRICS;
use lightbox_core::{Error, Result};
use serde_json::value::RawValue;
use serde_json::Value;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
pub const BATCH_CONCURRENCY: usize = 4;

/// Whether `auth` (the request's bearer, resolved once) may call a method.
pub fn authorize(access: Access, auth: &Result<Option<Caller>>) -> Result<Option<Caller>> {
    if access == Access::Public {
        return Ok(auth.as_ref().ok().cloned().flatten());
    }
    let caller = match auth {
        Ok(Some(caller)) => caller,
        // The database, not the credential, failed: say so, as -32603.
        Err(Error::Internal(_)) => {
            return Err(Error::Internal(anyhow::anyhow!(
                "authentication unavailable"
            )))
        }
        Ok(None) => return Err(Error::auth(AuthFailure::Missing)),
        Err(Error::Unauthorized { reason, .. }) => return Err(Error::auth(*reason)),
        Err(_) => return Err(Error::auth(AuthFailure::Malformed)),
    };
    let is_pat = matches!(caller.via, Via::Pat { .. });
    let allowed = match access {
        Access::Public | Access::Read => true,
        Access::Write => !matches!(
            caller.via,
            Via::Pat {
                can_write: false,
                ..
            }
        ),
        Access::Session => !is_pat,
        Access::Admin => !is_pat && caller.is_admin,
    };
    if allowed {
        return Ok(Some(caller.clone()));
    }
    let (reason, required) = match access {
        Access::Admin if !is_pat => (Denial::Role, "admin"),
        Access::Write => (Denial::Scope, "write"),
        _ => (Denial::Scope, "session"),
    };
    Err(Error::Denied { reason, required })
}

/// A call's outcome: a result, a library error, or an unknown method.
pub enum Outcome {
    Done(Result<Box<RawValue>>),
    UnknownMethod,
}

/// One response entry as JSON text, and how it ended for the request log.
pub struct Answer {
    pub text: String,
    pub outcome: String,
}

impl Answer {
    fn error(entry: Value) -> Answer {
        Answer {
            outcome: envelope::outcome_of(&entry),
            text: entry.to_string(),
        }
    }
}

/// Runs one handler's future under the time cap, turning a panic into -32603.
pub async fn capped<T, F>(fut: F, cap: Duration) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    let guarded = AssertUnwindSafe(fut).catch_unwind();
    match tokio::time::timeout(cap, guarded).await {
        Err(_) => Err(Error::Timeout),
        Ok(Err(_panic)) => Err(Error::Internal(anyhow::anyhow!("handler panicked"))),
        Ok(Ok(result)) => result,
    }
}

async fn call(
    state: &AppState,
    auth: &Result<Option<Caller>>,
    origin: &Origin,
    c: &Call,
) -> Outcome {
    if c.method == discover::NAME {
        let answer = crate::params::decode::<super::account::Nothing>(c.params.clone())
            .map(|_| discover::served(&state.base_url));
        METRICS.rpc(
            discover::NAME,
            answer.as_ref().err().map(Error::code),
            Duration::ZERO,
        );
        return Outcome::Done(answer);
    }
    let Some(method) = methods::find(&c.method) else {
        METRICS.rpc("unknown", Some(METHOD_NOT_FOUND), Duration::ZERO);
        return Outcome::UnknownMethod;
    };
    let started = std::time::Instant::now();
    let caller = match authorize(method.access, auth) {
        Ok(caller) => caller,
        Err(e) => {
            METRICS.rpc(method.name, Some(e.code()), started.elapsed());
            return Outcome::Done(Err(e));
        }
    };
    let ctx = Ctx::new(state.clone(), caller, origin);
    let result = capped((method.handler)(ctx, c.params.clone()), CALL_TIMEOUT).await;
    if matches!(method.access, Access::Write | Access::Admin) {
        // Deletions, takedowns and crop changes must reach /i/ at once.
        state.changes.changed();
    }
    let code = result.as_ref().err().map(Error::code);
    METRICS.rpc(method.name, code, started.elapsed());
    if let Err(Error::Internal(e)) = &result {
        tracing::error!(
            method = method.name,
            error = format!("{e:#}"),
            "call failed"
        );
    }
    Outcome::Done(result)
}

/// The response entry of one entry; `None` for a notification.
async fn answer(
    state: &AppState,
    auth: &Result<Option<Caller>>,
    origin: &Origin,
    entry: Entry,
) -> Option<Answer> {
    let c = match entry {
        Entry::Invalid { id } => {
            let r = envelope::Rejection::NotRequest;
            let entry = envelope::error_object(id, r.code(), r.message(), None);
            return Some(Answer::error(entry));
        }
        Entry::Call(c) => c,
    };
    let outcome = call(state, auth, origin, &c).await;
    let id = c.id?;
    Some(match outcome {
        Outcome::UnknownMethod => Answer::error(envelope::error_object(
            id,
            METHOD_NOT_FOUND,
            "method not found",
            None,
        )),
        Outcome::Done(Ok(v)) => Answer {
            text: envelope::result_text(&id, &v),
            outcome: "ok".to_owned(),
        },
        Outcome::Done(Err(e)) => Answer::error(envelope::from_error(id, &e)),
    })
}

pub async fn single(
    state: &AppState,
    auth: &Result<Option<Caller>>,
    origin: &Origin,
    entry: Entry,
) -> Option<Answer> {
    answer(state, auth, origin, entry).await
}

/// Answers in request order, running at most `BATCH_CONCURRENCY` at once.
/// `rpc.discover` is answered once per batch: its document is some 50 KB,
/// so twenty copies would turn a 1 KB anonymous request into a megabyte.
pub async fn batch(
    state: &AppState,
    auth: &Result<Option<Caller>>,
    origin: &Origin,
    entries: Vec<Entry>,
) -> Vec<Answer> {
    let mut discovered = false;
    let entries: Vec<(Entry, bool)> = entries
        .into_iter()
        .map(|e| {
            let again = is_discover(&e) && std::mem::replace(&mut discovered, true);
            (e, again)
        })
        .collect();
    in_order(entries, |(e, again)| async move {
        if again {
            return discovered_already(e);
        }
        answer(state, auth, origin, e).await
    })
    .await
}

/// An `rpc.discover` that is answered (a notification gets nothing back).
fn is_discover(entry: &Entry) -> bool {
    matches!(entry, Entry::Call(c) if c.method == discover::NAME && c.id.is_some())
}

/// A further `rpc.discover` of a batch: -32600 in its place, not run.
fn discovered_already(entry: Entry) -> Option<Answer> {
    let Entry::Call(c) = entry else { return None };
    let message = "invalid request: rpc.discover at most once per batch";
    Some(Answer::error(envelope::error_object(
        c.id?,
        envelope::INVALID_REQUEST,
        message,
        None,
    )))
}

/// Maps every item, at most `BATCH_CONCURRENCY` at a time, keeping order and
/// dropping `None`s.
pub async fn in_order<T, U, F, Fut>(items: Vec<T>, f: F) -> Vec<U>
where
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Option<U>>,
{
    futures::stream::iter(items)
        .map(f)
        .buffered(BATCH_CONCURRENCY)
        .filter_map(|v| async move { v })
        .collect()
        .await
}

/// The names to log: known methods by name, anything else as `unknown`.
pub fn log_names<'a>(calls: impl Iterator<Item = &'a Entry>) -> String {
    calls
        .map(|e| match e {
            Entry::Call(c) if c.method == discover::NAME => discover::NAME,
            Entry::Call(c) => methods::find(&c.method).map_or("unknown", |m| m.name),
            Entry::Invalid { .. } => "invalid",
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn caller(via: Via, is_admin: bool) -> Result<Option<Caller>> {
        Ok(Some(Caller {
            user_id: Uuid::nil(),
            email: "a@b.io".into(),
            is_admin,
            via,
        }))
    }

    #[test]
    fn access_rules() {
        let session = caller(
            Via::Session {
                session_id: Uuid::nil(),
            },
            false,
        );
        let admin = caller(
            Via::Session {
                session_id: Uuid::nil(),
            },
            true,
        );
        let read_pat = caller(
            Via::Pat {
                token_id: Uuid::nil(),
                can_write: false,
            },
            false,
        );
        let write_pat = caller(
            Via::Pat {
                token_id: Uuid::nil(),
                can_write: true,
            },
            true,
        );
        let code = |a, auth: &Result<Option<Caller>>| authorize(a, auth).err().map(|e| e.code());

        assert_eq!(code(Access::Public, &Ok(None)), None);
        assert_eq!(
            code(Access::Public, &Err(Error::auth(AuthFailure::Missing))),
            None
        );
        for a in [Access::Read, Access::Write, Access::Session, Access::Admin] {
            assert_eq!(code(a, &Ok(None)), Some(1001));
            assert_eq!(code(a, &Err(Error::auth(AuthFailure::Missing))), Some(1001));
        }
        assert_eq!(code(Access::Read, &read_pat), None);
        assert_eq!(code(Access::Write, &read_pat), Some(1003));
        assert_eq!(code(Access::Write, &write_pat), None);
        assert_eq!(code(Access::Session, &write_pat), Some(1003));
        assert_eq!(code(Access::Session, &session), None);
        assert_eq!(code(Access::Admin, &write_pat), Some(1003));
        assert_eq!(code(Access::Admin, &session), Some(1003));
        assert_eq!(code(Access::Admin, &admin), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_call_times_out_with_5001() {
        let slow = async {
            tokio::time::sleep(Duration::from_secs(11)).await;
            Ok(Value::Null)
        };
        assert_eq!(capped(slow, CALL_TIMEOUT).await.unwrap_err().code(), 5001);
        let quick = async { Ok(Value::Bool(true)) };
        assert_eq!(
            capped(quick, CALL_TIMEOUT).await.unwrap(),
            Value::Bool(true)
        );
    }

    #[tokio::test]
    async fn a_panicking_call_is_an_internal_error() {
        let boom = async { panic!("boom") };
        assert_eq!(
            capped::<Value, _>(boom, CALL_TIMEOUT)
                .await
                .unwrap_err()
                .code(),
            -32603
        );
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_four_calls_run_at_once_and_order_is_kept() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = in_order((0..20u64).collect(), |i| {
            let (running, peak) = (&running, &peak);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20 - i)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                (i % 5 != 0).then(|| Value::from(i))
            }
        })
        .await;
        assert_eq!(peak.load(Ordering::SeqCst), BATCH_CONCURRENCY);
        let expected: Vec<Value> = (0..20u64).filter(|i| i % 5 != 0).map(Value::from).collect();
        assert_eq!(out, expected);
    }
}
