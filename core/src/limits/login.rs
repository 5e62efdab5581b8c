//! Login limits that run before any password hashing, in memory (per
//! process): failures per client address, and failures per account from
//! addresses that never signed in to it. The database throttle of
//! `auth::throttle` comes after them, per (account, address). Re-
//! authentication (`account.setEmail`, `account.setPassword`) passes the
//! same limits: a stolen session must not become a faster way to guess.
//!
//! Failures are what count, not attempts, so an office or a CI job signing
//! in forty people from one address is never refused. Each attempt still
//! takes a unit of its budgets before its password is checked, and gives it
//! back only once it has signed in: parallel guesses cannot all pass one
//! reading of the budget, and an attempt whose caller hung up mid-check
//! counts as a failure (it may have been hashed). So a refusal comes only
//! from an address (or account and address) that has used up its failures.
//!
//! Why the account limit spares known addresses: a stranger spraying
//! guesses at one account from many addresses must be held back, but must
//! not be able to lock the owner out of their own usual address.

use crate::{Error, Result};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Known (account, address) pairs kept; beyond it the oldest half goes.
const KNOWN_MAX: usize = 100_000;
/// Budgets are swept of drained keys every this many checks.
const SWEEP_EVERY: u64 = 4096;

/// Failures per key per minute, as a leaky bucket: `n` at once, then one
/// more every `60 / n` seconds.
struct Budget {
    per_minute: f64,
    used: Mutex<HashMap<String, (f64, Instant)>>,
}

impl Budget {
    fn new(per_minute: u32) -> Budget {
        Budget {
            per_minute: f64::from(per_minute.max(1)),
            used: Mutex::default(),
        }
    }

    fn drained(&self, (used, at): (f64, Instant), now: Instant) -> f64 {
        let per_s = self.per_minute / 60.0;
        (used - now.saturating_duration_since(at).as_secs_f64() * per_s).max(0.0)
    }

    /// Takes one unit, or `Err(seconds until one is free)`.
    fn take(&self, key: &str, now: Instant) -> std::result::Result<(), u64> {
        let mut used = self.used.lock().expect("login budget");
        let level = used.get(key).map_or(0.0, |e| self.drained(*e, now));
        let over = level + 1.0 - self.per_minute;
        if over > 0.0 {
            return Err((over * 60.0 / self.per_minute).ceil().max(1.0) as u64);
        }
        used.insert(key.to_owned(), (level + 1.0, now));
        Ok(())
    }

    fn give_back(&self, key: &str, now: Instant) {
        let mut used = self.used.lock().expect("login budget");
        if let Some(e) = used.get_mut(key) {
            *e = ((self.drained(*e, now) - 1.0).max(0.0), now);
        }
    }

    fn sweep(&self, now: Instant) {
        let mut used = self.used.lock().expect("login budget");
        used.retain(|_, e| self.drained(*e, now) > 0.0);
    }
}

/// What an admitted attempt took, to give back if it signs in.
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    /// The address has signed in to the account before: the account budget
    /// was not charged, and its password checks go first
    /// (`auth::hashing::Lane::Known`).
    pub known: bool,
}

pub struct LoginGuard {
    per_address: Budget,
    per_account: Budget,
    /// (email, client key) -> last successful login, in ms.
    known: Mutex<HashMap<(String, String), i64>>,
    checks: AtomicU64,
}

impl LoginGuard {
    pub fn new(per_address_per_minute: u32, per_account_per_minute: u32) -> LoginGuard {
        LoginGuard {
            per_address: Budget::new(per_address_per_minute),
            per_account: Budget::new(per_account_per_minute),
            known: Mutex::default(),
            checks: AtomicU64::new(0),
        }
    }

    /// `Err(seconds to wait)` when this attempt must not be checked.
    pub fn admit(&self, email: &str, client: &str) -> std::result::Result<Admitted, u64> {
        let now = Instant::now();
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            self.per_address.sweep(now);
            self.per_account.sweep(now);
        }
        let known = self
            .known
            .lock()
            .expect("login guard")
            .contains_key(&(email.to_owned(), client.to_owned()));
        self.per_address.take(client, now)?;
        if !known {
            if let Err(wait) = self.per_account.take(email, now) {
                self.per_address.give_back(client, now);
                return Err(wait);
            }
        }
        Ok(Admitted { known })
    }

    /// The attempt was not a failure: what it took goes back.
    pub fn give_back(&self, email: &str, client: &str, admitted: Admitted) {
        let now = Instant::now();
        self.per_address.give_back(client, now);
        if !admitted.known {
            self.per_account.give_back(email, now);
        }
    }

    /// The address signed in to the account: the account limit spares it.
    pub fn signed_in(&self, email: &str, client: &str, admitted: Admitted, now_ms: i64) {
        self.give_back(email, client, admitted);
        let mut known = self.known.lock().expect("login guard");
        if known.len() >= KNOWN_MAX {
            let mut times: Vec<i64> = known.values().copied().collect();
            times.sort_unstable();
            let cut = times[times.len() / 2];
            known.retain(|_, t| *t > cut);
        }
        known.insert((email.to_owned(), client.to_owned()), now_ms);
    }

    /// Runs one password check of `email` from `client` inside the limits:
    /// refused at once (1001 `throttled`) when a budget is spent, and
    /// counted as a failure unless it succeeds or the server refused it
    /// for its own reasons (4002: the hashing queue was full).
    pub async fn check<T, F, Fut>(&self, email: &str, client: &str, work: F) -> Result<T>
    where
        F: FnOnce(Admitted) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let admitted = self.admit(email, client).map_err(|wait| Error::Throttled {
            retry_after_s: wait,
        })?;
        let result = work(admitted).await;
        match &result {
            Ok(_) => self.signed_in(email, client, admitted, crate::time::now_ms()),
            Err(Error::RateLimited { .. }) => self.give_back(email, client, admitted),
            Err(_) => {}
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::{Budget, LoginGuard};
    use std::time::{Duration, Instant};

    #[test]
    fn failures_spend_the_budgets_and_sign_ins_give_back() {
        let g = LoginGuard::new(3, 100);
        for i in 0..50 {
            let a = g.admit(&format!("u{i}@y"), "office").unwrap();
            g.signed_in(&format!("u{i}@y"), "office", a, 0);
        }
        assert!((0..3).all(|_| g.admit("x@y", "office").is_ok()));
        assert!(g.admit("other@y", "office").unwrap_err() >= 1);
        assert!(g.admit("other@y", "elsewhere").is_ok());
    }

    #[test]
    fn strangers_share_the_account_budget_but_known_addresses_pass() {
        let g = LoginGuard::new(100, 2);
        let a = g.admit("o@y", "home").unwrap();
        g.signed_in("o@y", "home", a, 0);
        assert!(g.admit("o@y", "a").is_ok() && g.admit("o@y", "b").is_ok());
        assert!(g.admit("o@y", "c").is_err(), "strangers share the window");
        assert!(g.admit("o@y", "home").is_ok(), "the owner's address passes");
        // A refusal by the account budget leaves the address's intact.
        let g = LoginGuard::new(1, 1);
        assert!(g.admit("p@y", "a").is_ok());
        assert!(g.admit("p@y", "b").is_err());
        assert!(g.admit("q@y", "b").is_ok());
    }

    #[test]
    fn the_budget_refills_at_its_rate() {
        let b = Budget::new(60);
        let t = Instant::now();
        assert!((0..60).all(|_| b.take("k", t).is_ok()));
        assert_eq!(b.take("k", t), Err(1));
        assert!(b.take("k", t + Duration::from_millis(1100)).is_ok());
        let b = Budget::new(2);
        assert!(b.take("k", t).is_ok() && b.take("k", t).is_ok());
        assert_eq!(b.take("k", t), Err(30));
        b.sweep(t + Duration::from_secs(61));
        assert!(b.used.lock().unwrap().is_empty());
    }
}
