//! The multipart upload path: the input is the whole body of
//! `POST /api/v1/images` under a fixed boundary, so the `file` and `meta`
//! parts, the sniffing, probing, completeness check and EXIF reading all
//! see hostile bytes. Nothing may answer 5xx.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lightbox_fuzz::{assert_handled, Harness};

pub const BOUNDARY: &str = "lightbox-fuzz-boundary";

fuzz_target!(|data: &[u8]| {
    let h = Harness::get();
    let token = h.bearer();
    let kind = format!("multipart/form-data; boundary={BOUNDARY}");
    let (status, out) = h.send("/api/v1/images", &kind, Some(&token), data.to_vec());
    assert_handled(status, &out, "upload");
});
