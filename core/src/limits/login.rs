//! Login limits that run before any password hashing, in memory (per
//! process): attempts per client address, and attempts per account from
//! addresses that never signed in to it. The database throttle of
//! `auth::throttle` comes after them, per (account, address).
//!
//! Why the account limit spares known addresses: a stranger spraying
//! guesses at one account from many addresses must be held back, but must
//! not be able to lock the owner out of their own usual address.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Known (account, address) pairs kept; beyond it the oldest half goes.
const KNOWN_MAX: usize = 100_000;
/// Limiter keys are swept of idle entries every this many checks.
const SWEEP_EVERY: u64 = 4096;

pub struct LoginGuard {
    per_address: DefaultKeyedRateLimiter<String>,
    per_account: DefaultKeyedRateLimiter<String>,
    /// (email, client key) -> last successful login, in ms.
    known: Mutex<HashMap<(String, String), i64>>,
    checks: AtomicU64,
}

fn per_minute(n: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(n.max(1)).expect("positive"))
}

impl LoginGuard {
    pub fn new(per_address_per_minute: u32, per_account_per_minute: u32) -> LoginGuard {
        LoginGuard {
            per_address: RateLimiter::keyed(per_minute(per_address_per_minute)),
            per_account: RateLimiter::keyed(per_minute(per_account_per_minute)),
            known: Mutex::default(),
            checks: AtomicU64::new(0),
        }
    }

    /// `Err(seconds to wait)` when this attempt must not be checked.
    pub fn admit(&self, email: &str, client: &str) -> Result<(), u64> {
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            self.per_address.retain_recent();
            self.per_account.retain_recent();
        }
        let wait = |not_until: governor::NotUntil<_>| {
            let d = not_until.wait_time_from(DefaultClock::default().now());
            d.as_secs() + 1
        };
        self.per_address
            .check_key(&client.to_owned())
            .map_err(wait)?;
        let known = self
            .known
            .lock()
            .expect("login guard")
            .contains_key(&(email.to_owned(), client.to_owned()));
        if !known {
            self.per_account
                .check_key(&email.to_owned())
                .map_err(wait)?;
        }
        Ok(())
    }

    /// The address signed in to the account: the account limit spares it.
    pub fn signed_in(&self, email: &str, client: &str, now_ms: i64) {
        let mut known = self.known.lock().expect("login guard");
        if known.len() >= KNOWN_MAX {
            let mut times: Vec<i64> = known.values().copied().collect();
            times.sort_unstable();
            let cut = times[times.len() / 2];
            known.retain(|_, t| *t > cut);
        }
        known.insert((email.to_owned(), client.to_owned()), now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::LoginGuard;

    #[test]
    fn addresses_and_accounts_are_limited_but_known_addresses_pass() {
        let g = LoginGuard::new(3, 100);
        assert!((0..3).all(|_| g.admit("x@y", "1.1.1.1").is_ok()));
        assert!(g.admit("other@y", "1.1.1.1").unwrap_err() >= 1);
        let g = LoginGuard::new(100, 2);
        g.signed_in("o@y", "home", 0);
        assert!(g.admit("o@y", "a").is_ok() && g.admit("o@y", "b").is_ok());
        assert!(
            g.admit("o@y", "c").is_err(),
            "strangers share the account window"
        );
        assert!(
            g.admit("o@y", "home").is_ok(),
            "the owner's address is spared"
        );
    }
}
