//! Answering a request early without losing the answer. A server that
//! replies while the client is still sending, then closes, makes the
//! client's TCP stack see a reset, and the client often reports that
//! instead of the reply. So the rest of the body is read and discarded
//! first, within a bound; past the bound the connection is closed anyway
//! (`Connection: close`), since an endless body must not hold us.

use axum::extract::Multipart;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use std::time::Duration;

/// Bytes read past an early error before giving up on the client.
pub const DRAIN_BYTES: u64 = 32 << 20;
/// Time spent reading them.
pub const DRAIN_TIME: Duration = Duration::from_secs(10);

/// Reads what is left of a multipart body (bounded), then answers.
pub async fn multipart(mut form: Multipart, mut response: Response) -> Response {
    let drained = tokio::time::timeout(DRAIN_TIME, async {
        let mut seen = 0u64;
        while let Ok(Some(mut field)) = form.next_field().await {
            while let Ok(Some(chunk)) = field.chunk().await {
                seen += chunk.len() as u64;
                if seen > DRAIN_BYTES {
                    return false;
                }
            }
        }
        true
    })
    .await
    .unwrap_or(false);
    if !drained {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
