//! The `image.list` cursor decoder: garbage is an error, and whatever it
//! accepts encodes back to a cursor that decodes to the same position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lightbox_core::images::cursor::{decode, encode};

fuzz_target!(|raw: &str| {
    if let Ok((at, id)) = decode(raw) {
        assert_eq!(decode(&encode(at, id)).ok(), Some((at, id)));
    }
});
