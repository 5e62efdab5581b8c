//! The JSON Schemas of the RPC methods' params and results, which the
//! method table asks for and `discover` puts into the OpenRPC document.

use super::ctx::Ctx;
use lightbox_core::Result;
use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use std::future::Future;

/// The generators for one document: params are read (the deserialize
/// contract), results written (the serialize contract).
pub struct Schemas {
    params: SchemaGenerator,
    results: SchemaGenerator,
}

impl Default for Schemas {
    fn default() -> Schemas {
        let settings = |contract| {
            let mut s = SchemaSettings::draft07();
            s.definitions_path = "/components/schemas".into();
            s.contract = contract;
            s.meta_schema = None;
            s
        };
        Schemas {
            params: settings(Contract::Deserialize).into_generator(),
            results: settings(Contract::Serialize).into_generator(),
        }
    }
}

impl Schemas {
    /// Both generators, to collect the named types they met.
    pub fn generators(&mut self) -> [&mut SchemaGenerator; 2] {
        [&mut self.params, &mut self.results]
    }
}

/// The params object's schema and the result's, for a handler
/// `async fn(Ctx, P) -> Result<R>`; the method table calls it.
pub fn describe<P, R, F, Fut>(_handler: F, s: &mut Schemas) -> (Schema, Schema)
where
    P: JsonSchema,
    R: JsonSchema,
    F: Fn(Ctx, P) -> Fut,
    Fut: Future<Output = Result<R>>,
{
    (
        P::json_schema(&mut s.params),
        s.results.subschema_for::<R>(),
    )
}
