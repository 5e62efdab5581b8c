//! Decoding named params into a method's struct; every failure is 2002 with
//! `data.errors: [{field, message}]`. Ids (`Id`) and states (`wire_enum!`)
//! check themselves as they are read, so a handler gets typed values.

use lightbox_core::domain::crop::{CropSpec, Format, Mode, DEFAULT_QUALITY};
use lightbox_core::domain::focus::Focus;
use lightbox_core::Error;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Between the path inside a flattened part and the message (`flattened`).
const PATH_END: char = '\u{1f}';

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
        let (path, message) = match e.inner().to_string().split_once(PATH_END) {
            Some((inner, message)) => (join(&e.path().to_string(), inner), message.to_owned()),
            None => (e.path().to_string(), e.inner().to_string()),
        };
        let field = if is_root(&path) {
            backticked(&message).unwrap_or("params").to_owned()
        } else {
            path
        };
        Error::invalid(&field, message)
    })
}

fn is_root(path: &str) -> bool {
    path.is_empty() || path == "."
}

fn join(outer: &str, inner: &str) -> String {
    match (is_root(outer), is_root(inner)) {
        (true, _) => inner.to_owned(),
        (false, true) => outer.to_owned(),
        (false, false) => format!("{outer}.{inner}"),
    }
}

/// For `#[serde(flatten, deserialize_with = "flattened")]`: serde reads a
/// flattened part from a buffer, where an error loses its path; this keeps
/// the path in the message, and `decode` takes it back out, so a bad
/// `width` of a crop is still 2002 on `width`.
pub fn flattened<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    serde_path_to_error::deserialize(d)
        .map_err(|e| D::Error::custom(format!("{}{PATH_END}{}", e.path(), e.inner())))
}

/// A crop spec as `image.crop.add` and `album.crop.set` take it, flattened
/// beside the id of what it crops.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CropParams {
    #[schemars(regex(pattern = "^[a-z0-9][a-z0-9-]{0,31}$"))]
    code: String,
    /// 0 (follow the height) to 15000; width or height must be positive.
    #[schemars(range(max = 15000))]
    width: u32,
    #[schemars(range(max = 15000))]
    height: u32,
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    format: Format,
    /// Default 80.
    #[schemars(range(min = 1, max = 100))]
    quality: Option<u8>,
    focus: Option<Focus>,
}

impl From<CropParams> for CropSpec {
    fn from(p: CropParams) -> CropSpec {
        CropSpec {
            code: p.code,
            width: p.width,
            height: p.height,
            mode: p.mode,
            format: p.format,
            quality: p.quality.unwrap_or(DEFAULT_QUALITY),
            focus: p.focus,
            at: None,
        }
    }
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

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Crop {
        id: lightbox_core::domain::id::Id,
        #[serde(flatten, deserialize_with = "flattened")]
        spec: CropParams,
    }

    fn crop_error(v: Value) -> (String, String) {
        match decode::<Crop>(v).unwrap_err() {
            Error::Validation(errs) => (errs[0].field.clone(), errs[0].message.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_the_field_inside_a_flattened_part() {
        let id = uuid::Uuid::new_v4().to_string();
        let ok = json!({"id": id, "code": "sq", "width": 10, "height": 10});
        assert!(decode::<Crop>(ok).is_ok());
        let cases = [
            (
                json!({"id": "nope", "code": "sq", "width": 1, "height": 1}),
                "id",
                "must be a UUID",
            ),
            (
                json!({"id": id, "code": "sq", "width": "x", "height": 1}),
                "width",
                "invalid type: string \"x\", expected u32",
            ),
            (
                json!({"id": id, "code": "sq", "width": 1, "height": 1, "mode": "zoom"}),
                "mode",
                "must be fill, fit or pad",
            ),
            (
                json!({"id": id, "code": "sq", "width": 1}),
                "height",
                "missing field `height`",
            ),
            (
                json!({"id": id, "code": "sq", "width": 1, "height": 1, "extra": 1}),
                "extra",
                "unknown field `extra`",
            ),
        ];
        for (params, field, message) in cases {
            let got = crop_error(params.clone());
            assert_eq!(
                (got.0.as_str(), got.1.as_str()),
                (field, message),
                "{params}"
            );
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
