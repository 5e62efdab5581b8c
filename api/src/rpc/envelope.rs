//! JSON-RPC 2.0 framing: parsing a body into calls, and building responses.
//! A batch is counted while it is read, so a 21-element batch is refused
//! without deserializing what comes after the 20th element.

use lightbox_core::Error;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::fmt;

pub const MAX_BATCH: usize = 20;
const TOO_MANY: &str = "lightbox: batch over the limit";

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `None` for a notification.
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Call(Call),
    /// Not a request object; answered with -32600 and the id if one was readable.
    Invalid {
        id: Value,
    },
}

#[derive(Debug, PartialEq)]
pub enum Body {
    Single(Entry),
    Batch(Vec<Entry>),
}

/// A body refused as a whole (HTTP 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    Parse,
    NotRequest,
    EmptyBatch,
    BatchTooLarge,
    BatchNotAllowed,
    MethodMismatch,
}

impl Rejection {
    pub fn code(self) -> i64 {
        match self {
            Rejection::Parse => PARSE_ERROR,
            _ => INVALID_REQUEST,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            Rejection::Parse => "parse error",
            Rejection::NotRequest => "invalid request: not a JSON-RPC 2.0 request object",
            Rejection::EmptyBatch => "invalid request: empty batch",
            Rejection::BatchTooLarge => "invalid request: more than 20 calls in a batch",
            Rejection::BatchNotAllowed => "invalid request: batches go to POST /rpc",
            Rejection::MethodMismatch => "invalid request: method differs from the path",
        }
    }

    pub fn body(self) -> Value {
        error_object(Value::Null, self.code(), self.message(), None)
    }
}

struct Limited(Vec<Box<RawValue>>);

impl<'de> Deserialize<'de> for Limited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Limited;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Limited, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Box<RawValue>>()? {
                    if items.len() == MAX_BATCH {
                        return Err(de::Error::custom(TOO_MANY));
                    }
                    items.push(item);
                }
                Ok(Limited(items))
            }
        }
        d.deserialize_seq(V)
    }
}

pub fn parse(bytes: &[u8]) -> Result<Body, Rejection> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let Limited(raw) = serde_json::from_slice(bytes).map_err(|e| {
            if e.to_string().starts_with(TOO_MANY) {
                Rejection::BatchTooLarge
            } else {
                Rejection::Parse
            }
        })?;
        if raw.is_empty() {
            return Err(Rejection::EmptyBatch);
        }
        let entries = raw
            .iter()
            .map(|r| {
                serde_json::from_str::<Value>(r.get())
                    .map(entry)
                    .map_err(|_| Rejection::Parse)
            })
            .collect::<Result<_, _>>()?;
        return Ok(Body::Batch(entries));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|_| Rejection::Parse)?;
    match entry(value) {
        Entry::Invalid { .. } => Err(Rejection::NotRequest),
        call => Ok(Body::Single(call)),
    }
}

fn entry(value: Value) -> Entry {
    let Value::Object(mut obj) = value else {
        return Entry::Invalid { id: Value::Null };
    };
    let id = match obj.remove("id") {
        None => None,
        // Integers only, as the contract says: a fraction or an integer
        // past 64 bits could not be echoed back as it was sent.
        Some(Value::Number(n)) if !(n.is_i64() || n.is_u64()) => {
            return Entry::Invalid { id: Value::Null }
        }
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id),
        Some(_) => return Entry::Invalid { id: Value::Null },
    };
    let method = match obj.remove("method") {
        Some(Value::String(m)) if obj.get("jsonrpc") == Some(&json!("2.0")) => m,
        _ => {
            return Entry::Invalid {
                id: id.unwrap_or(Value::Null),
            }
        }
    };
    let params = obj
        .remove("params")
        .unwrap_or_else(|| Value::Object(Map::new()));
    Entry::Call(Call { id, method, params })
}

pub fn error_object(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// A success response entry, written around the already serialized result
/// (`Value`'s `Display` is its JSON text).
pub fn result_text(id: &Value, result: &RawValue) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, result.get())
}

pub fn from_error(id: Value, e: &Error) -> Value {
    error_object(id, e.code(), e.message(), Some(e.data()))
}

/// How an answered entry ended, for the request log: `ok`, or the error
/// code with its `data.reason` (a failed login reads
/// `1001:wrong_credentials`).
pub fn outcome_of(entry: &Value) -> String {
    match entry.get("error") {
        None => "ok".to_owned(),
        Some(e) => {
            let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
            match e.pointer("/data/reason").and_then(Value::as_str) {
                Some(reason) => format!("{code}:{reason}"),
                None => code.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: Value, m: &str) -> String {
        json!({"jsonrpc":"2.0","id":id,"method":m}).to_string()
    }

    #[test]
    fn single_and_batch() {
        let b = parse(call(json!(7), "a.b").as_bytes()).unwrap();
        let Body::Single(Entry::Call(c)) = b else {
            panic!()
        };
        assert_eq!(
            (c.id, c.method.as_str(), c.params),
            (Some(json!(7)), "a.b", json!({}))
        );

        let batch = format!(
            "[{}, 5, {}]",
            call(json!("x"), "m"),
            r#"{"jsonrpc":"2.0","method":"n"}"#
        );
        let Body::Batch(v) = parse(batch.as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(v.len(), 3);
        assert_eq!(v[1], Entry::Invalid { id: Value::Null });
        assert!(matches!(&v[2], Entry::Call(Call { id: None, .. })));
    }

    #[test]
    fn rejections() {
        assert_eq!(parse(b"{nope"), Err(Rejection::Parse));
        assert_eq!(parse(b"[1,"), Err(Rejection::Parse));
        assert_eq!(parse(b"42"), Err(Rejection::NotRequest));
        assert_eq!(
            parse(br#"{"jsonrpc":"1.0","id":1,"method":"a"}"#),
            Err(Rejection::NotRequest)
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":{},"method":"a"}"#),
            Err(Rejection::NotRequest)
        );
        assert_eq!(parse(b" [ ] "), Err(Rejection::EmptyBatch));
        let twenty = vec![call(json!(1), "a"); 20].join(",");
        assert!(
            matches!(parse(format!("[{twenty}]").as_bytes()), Ok(Body::Batch(v)) if v.len() == 20)
        );
        // The 22nd element is not even valid JSON: the count stops reading first.
        let over = format!("[{twenty},{},{{{{{{", call(json!(1), "a"));
        assert_eq!(parse(over.as_bytes()), Err(Rejection::BatchTooLarge));
    }

    #[test]
    fn ids_are_strings_integers_or_null() {
        for id in ["1.5", "-0", "0.1e1", "123456789012345678901234567890"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"a"}}"#);
            assert_eq!(parse(body.as_bytes()), Err(Rejection::NotRequest), "{id}");
        }
        for id in ["18446744073709551615", "-9223372036854775808", "0"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"a"}}"#);
            let Ok(Body::Single(Entry::Call(call))) = parse(body.as_bytes()) else {
                panic!("{id}")
            };
            assert_eq!(call.id.map(|v| v.to_string()).as_deref(), Some(id));
        }
    }
}
