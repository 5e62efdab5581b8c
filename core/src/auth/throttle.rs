//! Login throttling: from the 5th consecutive failure for one (email,
//! client address), further attempts inside a backoff window of 1 s, 2 s,
//! 4 s … (at most 300 s) after the last failure are refused without
//! checking the password. The counts live in the database, so every API
//! replica applies the same throttle. Re-authentication shares the counts
//! with login: a guess is a guess, whichever method carries it.

use super::hashing::{Lane, Whose};
use super::{now, password};
use crate::db::Repo;
use crate::{Error, Result};
use lightbox_domain::accounts::User;
use lightbox_domain::error::AuthFailure;

pub const FREE_FAILURES: i64 = 5;
pub const MAX_BACKOFF_S: i64 = 300;

/// Seconds to wait before the next attempt is checked, if any.
pub fn retry_after_s(failures: i64, last_failure_ms: i64, now_ms: i64) -> Option<u64> {
    if failures < FREE_FAILURES {
        return None;
    }
    let exp = (failures - FREE_FAILURES).min(16) as u32;
    let window_ms = (1i64 << exp).min(MAX_BACKOFF_S) * 1000;
    let remaining = last_failure_ms + window_ms - now_ms;
    (remaining > 0).then(|| ((remaining + 999) / 1000) as u64)
}

/// Checks `password` against `user` (the account of `email`, if any) from
/// `client`, under the throttle; the user when it matches. Callers ask
/// `hashing::has_room` first, before they read anything.
pub async fn check(
    repo: &dyn Repo,
    (email, client): (&str, &str),
    user: Option<User>,
    password: String,
    lane: Lane,
) -> Result<User> {
    let t = now();
    let previous = repo.login_failures(email, client).await?;
    if let Some(wait) = previous.and_then(|(failures, last)| retry_after_s(failures, last, t)) {
        return Err(Error::Throttled {
            retry_after_s: wait,
        });
    }
    // The attempt counts as a failure before the password is checked, in
    // one atomic increment, so parallel guesses cannot all pass the read
    // above: attempts that slipped in since it count as failures made just
    // now, and push this one over the limit (a success clears the count).
    let counted = repo.record_login_failure(email, client, t).await?;
    let before = previous.map_or(0, |(failures, _)| failures);
    if counted - 1 > before {
        if let Some(wait) = retry_after_s(counted - 1, t, t) {
            return Err(Error::Throttled {
                retry_after_s: wait,
            });
        }
    }
    let whose = Whose {
        lane,
        account: email,
    };
    let user = match user {
        Some(u) if password::verify(whose, password, u.password_hash.clone()).await? => u,
        found => {
            if found.is_none() {
                password::verify_against_nothing(whose, String::new()).await?;
            }
            return Err(Error::Unauthorized {
                reason: AuthFailure::WrongCredentials,
                retry_after_s: retry_after_s(counted, t, t),
            });
        }
    };
    repo.clear_login_failures(email, client).await?;
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::retry_after_s;

    #[test]
    fn four_failures_are_free() {
        assert_eq!(retry_after_s(4, 0, 0), None);
    }

    #[test]
    fn windows_double_from_one_second_and_cap_at_five_minutes() {
        assert_eq!(retry_after_s(5, 0, 0), Some(1));
        assert_eq!(retry_after_s(5, 0, 1000), None);
        assert_eq!(retry_after_s(6, 0, 0), Some(2));
        assert_eq!(retry_after_s(7, 0, 1500), Some(3));
        assert_eq!(retry_after_s(13, 0, 0), Some(256));
        assert_eq!(retry_after_s(14, 0, 0), Some(300));
        assert_eq!(retry_after_s(90, 0, 0), Some(300));
        assert_eq!(retry_after_s(90, 0, 300_000), None);
    }
}
