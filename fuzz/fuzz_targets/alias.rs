//! The alias normaliser: whatever it accepts is canonical (normalising it
//! again changes nothing) and within the documented syntax.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lightbox_core::domain::alias::normalize;

fuzz_target!(|raw: &str| {
    if let Ok(alias) = normalize(raw) {
        assert_eq!(normalize(&alias).ok().as_deref(), Some(alias.as_str()));
        assert!((3..=63).contains(&alias.len()), "{alias:?}");
        assert!(alias
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'));
        assert!(alias.as_bytes()[0].is_ascii_alphanumeric());
    }
});
