//! A photo seen within its folder: `/s/{token}/{photo}`,
//! `/a/{alias}/{photo}` and `/albums/{id}/{photo}`, with the way back to
//! the folder and to its neighbours in the folder's order. Only photos a
//! visitor of that folder sees are shown; an unlisted folder's photos
//! stay behind its link (so `resetToken` revokes them too).

use super::html::{self, Viewer};
use super::visitors::{cursor, Address, Visit, PAGE_SIZE};
use super::Sharing;
use crate::{Error, Result};
use lightbox_domain::album::PublishMode;
use lightbox_domain::alias::AliasState;
use lightbox_domain::image::Image;
use lightbox_domain::urls;
use uuid::Uuid;

impl Sharing {
    /// The page of a photo in its public, live folder and the folder's
    /// name, for the way back from `/p/{id}`; `None` unless that folder's
    /// visitors see the photo (so the link never leads to a 404).
    pub async fn public_album(&self, album: Uuid, photo: Uuid) -> Result<Option<(String, String)>> {
        let Some(album) = self.repo.album(None, album).await? else {
            return Ok(None);
        };
        if album.mode != PublishMode::Public || !self.is_live(&album) {
            return Ok(None);
        }
        let shared = self.shared(album.clone());
        if shared.photo(photo).await?.is_none() {
            return Ok(None);
        }
        let aliases = self.repo.aliases_of(album.id).await?;
        let primary = aliases.iter().find(|a| a.state == AliasState::Current);
        let path = urls::public_album(primary.map(|a| a.alias.as_str()), album.id);
        Ok(Some((urls::in_album(&path, photo), album.name)))
    }

    pub async fn visit_photo(&self, address: &Address, photo: Uuid) -> Result<Visit> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            Err(to) => return Ok(Visit::Redirect(urls::in_album(&to, photo))),
        };
        let unlisted = found.album.mode == PublishMode::Unlisted;
        let shared = self.shared(found.album);
        let shown = shared.photo(photo).await?.ok_or(Error::NotFound)?;
        let at = shared.rank(Some(photo)).await?.ok_or(Error::NotFound)?;
        let total = shared.rank(None).await?.unwrap_or_default();
        let view = self.views(&shared, &[shown]).await?;
        let view = view.first().ok_or(Error::NotFound)?;
        let link = |p: Option<Image>| p.map(|p| urls::in_album(&found.base, p.id));
        let prev = link(shared.before(photo, 0).await?);
        let next = shared.page(Some(photo), 1).await?.unwrap_or_default();
        let next = link(next.into_iter().next());
        // The grid page that holds the photo: after the last photo of the
        // page before it (`visitors::page` cuts PAGE_SIZE at a time).
        let into_page = (at % PAGE_SIZE as i64) as u32;
        let before_page = match at >= PAGE_SIZE as i64 {
            true => shared.before(photo, into_page).await?,
            false => None,
        };
        let back = match before_page {
            Some(before) => format!("{}?after={}#photo-{photo}", found.base, cursor(before.id)),
            None => format!("{}#photo-{photo}", found.base),
        };
        let page_url = urls::absolute(&self.base_url, &urls::in_album(&found.base, photo));
        let page = Viewer {
            photo: view,
            folder: &shared.album.name,
            stylesheet: urls::routes::STYLESHEET,
            favicon: urls::routes::FAVICON,
            noindex: unlisted,
            page_url: &page_url,
            back: &back,
            prev: prev.as_deref(),
            next: next.as_deref(),
            position: at + 1,
            total,
            download: shared.policy().allow_download,
        };
        Ok(Visit::Page {
            html: html::render(&page)?,
            unlisted,
        })
    }
}
