//! JSON-RPC envelopes and params: the first byte picks `POST /rpc` or one
//! method's `POST /rpc/{method}`, the rest is the body, sent with a valid
//! admin token. Nothing may answer 5xx or -32603.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lightbox_api::rpc::methods::METHODS;
use lightbox_fuzz::{assert_handled, Harness};

fuzz_target!(|data: &[u8]| {
    let Some((pick, body)) = data.split_first() else {
        return;
    };
    let h = Harness::get();
    let path = match METHODS.get(*pick as usize) {
        Some(m) if m.name != "account.setPassword" && m.name != "auth.logout" => {
            format!("/rpc/{}", m.name)
        }
        _ => "/rpc".to_owned(),
    };
    let token = h.bearer();
    let (status, out) = h.send(&path, "application/json", Some(&token), body.to_vec());
    assert_handled(status, &out, &path);
});
