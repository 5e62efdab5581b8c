//! The one table of RPC methods: name, who may call it, handler. Adding a
//! method is one line here plus its handler in the module of its family.

use super::ctx::Ctx;
use super::schemas::Schemas;
use super::{account, admin, albums, auth, images, jobs, sharing, tokens};
use futures::future::BoxFuture;
use lightbox_core::Result;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Who may call a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No bearer needed.
    Public,
    /// Any bearer: JWT session or PAT with `read`.
    Read,
    /// Changes something: a JWT session or a PAT with `write`.
    Write,
    /// A JWT session only, never a PAT.
    Session,
    /// An admin's JWT session.
    Admin,
}

/// A handler's result is serialized once, straight from its type: no
/// intermediate `Value` tree (a 50-photo page is 70 KB of JSON).
pub type Handler = fn(Ctx, Value) -> BoxFuture<'static, Result<Box<RawValue>>>;

/// The JSON Schemas of a method's params object and result.
pub type Describe = fn(&mut Schemas) -> (schemars::Schema, schemars::Schema);

pub struct Method {
    pub name: &'static str,
    pub access: Access,
    pub handler: Handler,
    pub describe: Describe,
    /// The codes the method itself may answer, beyond those of its access
    /// level (1001, 1003), its params (2002) and every call (5001, -32603).
    pub errors: &'static [i64],
}

/// Wraps `async fn(Ctx, P) -> Result<impl Serialize>` as a `Handler`, with
/// its description for `rpc.discover`.
macro_rules! method {
    ($name:literal, $access:ident, $f:path) => {
        method!($name, $access, $f, [])
    };
    ($name:literal, $access:ident, $f:path, [$($code:expr),*]) => {
        Method {
            name: $name,
            access: Access::$access,
            handler: |ctx, params| {
                Box::pin(async move {
                    let out = $f(ctx, crate::params::decode(params)?).await?;
                    Ok(serde_json::value::to_raw_value(&out).map_err(anyhow::Error::from)?)
                })
            },
            describe: |s| super::schemas::describe($f, s),
            errors: &[$($code),*],
        }
    };
}

pub static METHODS: &[Method] = &[
    method!("auth.login", Public, auth::login, [1001, 4002]),
    method!("auth.refresh", Public, auth::refresh, [1001]),
    method!("auth.logout", Public, auth::logout, [1001]),
    method!("account.me", Read, account::me),
    method!("account.setEmail", Session, account::set_email, [4002]),
    method!(
        "account.setPassword",
        Session,
        account::set_password,
        [4002]
    ),
    method!("token.create", Session, tokens::create),
    method!("token.list", Session, tokens::list),
    method!("token.revoke", Session, tokens::revoke, [2001]),
    method!("admin.user.create", Admin, admin::create_user, [4002]),
    method!("admin.user.list", Admin, admin::list_users),
    method!("admin.takedown", Admin, admin::takedown, [2001]),
    method!("admin.restore", Admin, admin::restore, [2001]),
    method!("album.create", Write, albums::create),
    method!("album.get", Read, albums::get, [2001]),
    method!("album.list", Read, albums::list),
    method!("album.update", Write, albums::update, [2001]),
    method!("album.delete", Write, albums::delete, [2001]),
    method!("album.reorder", Write, albums::reorder, [2001]),
    method!("album.crop.set", Write, albums::crop_set, [2001, 4001]),
    method!("album.crop.delete", Write, albums::crop_delete, [2001]),
    method!("album.ownerStatus", Read, albums::owner_status, [2001]),
    method!(
        "album.downloadToken",
        Read,
        albums::download_token,
        [2001, 2006]
    ),
    method!("job.get", Read, jobs::get, [2001]),
    method!("album.sharing.get", Read, sharing::get, [2001]),
    method!(
        "album.sharing.setPolicy",
        Write,
        sharing::set_policy,
        [2001]
    ),
    method!(
        "album.sharing.setMode",
        Write,
        sharing::set_mode,
        [2001, 2004]
    ),
    method!(
        "album.sharing.republish",
        Write,
        sharing::republish,
        [2001, 2004]
    ),
    method!(
        "album.sharing.resetToken",
        Write,
        sharing::reset_token,
        [2001, 2004]
    ),
    method!(
        "album.alias.release",
        Write,
        sharing::alias_release,
        [2001, 2004]
    ),
    method!("album.alias.check", Read, sharing::alias_check, [4002]),
    method!("album.cover.set", Write, sharing::cover_set, [2001, 2004]),
    method!("album.preview", Read, sharing::preview, [2001, 2003]),
    method!("image.get", Read, images::get, [2001]),
    method!("image.list", Read, images::list, [2001, 2003]),
    method!("image.update", Write, images::update, [2001, 2004]),
    method!("image.delete", Write, images::delete, [2001]),
    method!("image.crop.add", Write, images::crop_add, [2001, 4001]),
    method!("image.crop.delete", Write, images::crop_delete, [2001]),
    method!("image.setVisibility", Write, images::set_visibility, [2001]),
    method!(
        "image.exif.setVisibility",
        Write,
        images::exif_set_visibility,
        [2001]
    ),
    method!("image.getPublic", Public, images::get_public, [2001, 2004]),
    method!(
        "image.archiveToken",
        Read,
        images::archive_token,
        [2001, 2006]
    ),
    method!(
        "image.downloadToken",
        Read,
        images::download_token,
        [2001, 2006]
    ),
    method!(
        "image.download.status",
        Read,
        images::download_status,
        [2001, 2006]
    ),
];

pub fn find(name: &str) -> Option<&'static Method> {
    static INDEX: OnceLock<HashMap<&'static str, &'static Method>> = OnceLock::new();
    INDEX
        .get_or_init(|| METHODS.iter().map(|m| (m.name, m)).collect())
        .get(name)
        .copied()
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = super::METHODS.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), super::METHODS.len());
    }
}
