//! The opaque `image.list` cursor: the (sort key, id) of the last item.

use crate::{Error, Result};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use uuid::Uuid;

pub fn encode(sort_at: i64, id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(format!("{sort_at}.{id}"))
}

pub fn decode(cursor: &str) -> Result<(i64, Uuid)> {
    let bad = || Error::invalid("cursor", "is not a cursor this server issued");
    let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
    let text = String::from_utf8(raw).map_err(|_| bad())?;
    let (sort, id) = text.split_once('.').ok_or_else(bad)?;
    Ok((
        sort.parse().map_err(|_| bad())?,
        Uuid::parse_str(id).map_err(|_| bad())?,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_and_garbage() {
        let id = uuid::Uuid::new_v4();
        assert_eq!(super::decode(&super::encode(-5, id)).unwrap(), (-5, id));
        for bad in ["", "%%%", "bm9wZQ", &super::encode(1, id)[1..]] {
            assert!(super::decode(bad).is_err(), "{bad}");
        }
    }
}
