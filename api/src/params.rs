//! Decoding named params into a method's struct; every failure is 2002 with
//! `data.errors: [{field, message}]`.

use lightbox_core::Error;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub fn decode<T: DeserializeOwned>(params: Value) -> Result<T, Error> {
    if !params.is_object() {
        return Err(Error::invalid(
            "params",
            "must be an object of named params",
        ));
    }
    if let Some(field) = nul_in(&params, "") {
        // No text with a NUL is stored: PostgreSQL refuses it, SQLite
        // would keep a string that C-based tools then cut short.
        return Err(Error::invalid(&field, "must not contain NUL characters"));
    }
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        let field = if path.is_empty() || path == "." {
            backticked(&message).unwrap_or("params").to_owned()
        } else {
            path
        };
        Error::invalid(&field, message)
    })
}

/// For `#[serde(default, deserialize_with = "present")]` on an
/// `Option<Option<T>>`: absent stays `None`, null becomes `Some(None)`.
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// The path of the first string (or key) holding a NUL character.
fn nul_in(v: &Value, path: &str) -> Option<String> {
    let here = || {
        if path.is_empty() {
            "params".to_owned()
        } else {
            path.to_owned()
        }
    };
    match v {
        Value::String(s) if s.contains('\0') => Some(here()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| nul_in(x, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if k.contains('\0') {
                Some(p)
            } else {
                nul_in(x, &p)
            }
        }),
        _ => None,
    }
}

/// serde names missing and unknown fields between backticks.
fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct P {
        email: String,
        n: Option<i64>,
    }

    fn field(v: Value) -> String {
        match decode::<P>(v).unwrap_err() {
            Error::Validation(errs) => errs[0].field.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_the_field() {
        assert!(decode::<P>(json!({"email": "x"})).is_ok());
        assert_eq!(field(json!({})), "email");
        assert_eq!(field(json!({"email": 3})), "email");
        assert_eq!(field(json!({"email": "x", "n": "seven"})), "n");
        assert_eq!(field(json!({"email": "x", "extra": 1})), "extra");
        assert_eq!(field(json!(["x"])), "params");
    }
}
