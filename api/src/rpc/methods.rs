//! The one table of RPC methods: name, who may call it, handler. Adding a
//! method is one line here plus its handler in the module of its family.

use super::ctx::Ctx;
use super::{account, admin, albums, auth, images, sharing, tokens};
use futures::future::BoxFuture;
use lightbox_core::Result;
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

pub type Handler = fn(Ctx, Value) -> BoxFuture<'static, Result<Value>>;

pub struct Method {
    pub name: &'static str,
    pub access: Access,
    pub handler: Handler,
}

/// Wraps `async fn(Ctx, P) -> Result<impl Serialize>` as a `Handler`.
macro_rules! method {
    ($name:literal, $access:ident, $f:path) => {
        Method {
            name: $name,
            access: Access::$access,
            handler: |ctx, params| {
                Box::pin(async move {
                    let out = $f(ctx, crate::params::decode(params)?).await?;
                    Ok(serde_json::to_value(out).map_err(anyhow::Error::from)?)
                })
            },
        }
    };
}

pub static METHODS: &[Method] = &[
    method!("auth.login", Public, auth::login),
    method!("auth.refresh", Public, auth::refresh),
    method!("auth.logout", Public, auth::logout),
    method!("account.me", Read, account::me),
    method!("account.setEmail", Session, account::set_email),
    method!("account.setPassword", Session, account::set_password),
    method!("token.create", Session, tokens::create),
    method!("token.list", Session, tokens::list),
    method!("token.revoke", Session, tokens::revoke),
    method!("admin.user.create", Admin, admin::create_user),
    method!("admin.user.list", Admin, admin::list_users),
    method!("admin.takedown", Admin, admin::takedown),
    method!("admin.restore", Admin, admin::restore),
    method!("album.create", Write, albums::create),
    method!("album.get", Read, albums::get),
    method!("album.list", Read, albums::list),
    method!("album.update", Write, albums::update),
    method!("album.delete", Write, albums::delete),
    method!("album.reorder", Write, albums::reorder),
    method!("album.crop.set", Write, albums::crop_set),
    method!("album.crop.delete", Write, albums::crop_delete),
    method!("album.ownerStatus", Read, albums::owner_status),
    method!("album.downloadToken", Read, albums::download_token),
    method!("album.sharing.get", Read, sharing::get),
    method!("album.sharing.setPolicy", Write, sharing::set_policy),
    method!("album.sharing.setMode", Write, sharing::set_mode),
    method!("album.sharing.republish", Write, sharing::republish),
    method!("album.sharing.resetToken", Write, sharing::reset_token),
    method!("album.alias.release", Write, sharing::alias_release),
    method!("album.alias.check", Read, sharing::alias_check),
    method!("album.cover.set", Write, sharing::cover_set),
    method!("album.preview", Read, sharing::preview),
    method!("image.get", Read, images::get),
    method!("image.list", Read, images::list),
    method!("image.update", Write, images::update),
    method!("image.delete", Write, images::delete),
    method!("image.crop.add", Write, images::crop_add),
    method!("image.crop.delete", Write, images::crop_delete),
    method!("image.setVisibility", Write, images::set_visibility),
    method!(
        "image.exif.setVisibility",
        Write,
        images::exif_set_visibility
    ),
    method!("image.getPublic", Public, images::get_public),
    method!("image.archiveToken", Read, images::archive_token),
    method!("image.downloadToken", Read, images::download_token),
    method!("image.download.status", Read, images::download_status),
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
