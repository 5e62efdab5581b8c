//! Ids in params: a UUID read from its text at the edge, so a handler
//! gets a `Uuid` or the call is 2002 naming the param ("must be a UUID",
//! through `serde_path_to_error`), and never parses an id itself.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use uuid::Uuid;

/// A param that must be a UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Id(pub Uuid);

/// What a param that is not a UUID is told.
pub const NOT_A_UUID: &str = "must be a UUID";

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        let text = String::deserialize(d)?;
        Uuid::parse_str(&text)
            .map(Id)
            .map_err(|_| D::Error::custom(NOT_A_UUID))
    }
}

impl From<Id> for Uuid {
    fn from(id: Id) -> Uuid {
        id.0
    }
}

/// A param naming something by id, where text that is no UUID simply names
/// nothing (`None`): `image.getPublic` answers it 2001 like any unknown id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnyId(pub Option<Uuid>);

impl<'de> Deserialize<'de> for AnyId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AnyId, D::Error> {
        let text = String::deserialize(d)?;
        Ok(AnyId(Uuid::parse_str(&text).ok()))
    }
}

/// Both read a UUID's text, and the document says so where the param is:
/// `{"type": "string", "format": "uuid"}`, inline.
macro_rules! uuid_schema {
    ($($name:ident),+) => {$(
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                Uuid::json_schema(generator)
            }
        }
    )+};
}

uuid_schema!(Id, AnyId);
