//! Login throttling policy: from the 5th consecutive failure for one
//! (email, client address), further attempts inside a backoff window of
//! 1 s, 2 s, 4 s … (at most 300 s) after the last failure are refused
//! without checking the password. The counts live in the database, so every
//! API replica applies the same throttle.

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
