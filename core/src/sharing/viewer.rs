//! A photo seen within its folder: `/s/{token}/{photo}`,
//! `/a/{alias}/{photo}` and `/albums/{id}/{photo}`, with the way back to
//! the folder and to its neighbours in the folder's order. Only photos a
//! visitor of that folder sees are shown; an unlisted folder's photos
//! stay behind its link (so `resetToken` revokes them too).

use super::html::{self, Viewer};
use super::visitors::{cursor, Address, Visit, PAGE_SIZE};
use super::Sharing;
use crate::domain::album::PublishMode;
use crate::domain::alias::AliasState;
use crate::domain::image::Image;
use crate::domain::urls;
use crate::{Error, Result};
use uuid::Uuid;

impl Sharing {
    /// The page of a photo in its public, live folder and the folder's
    /// name, for the way back from `/p/{id}`; `None` unless that folder's
    /// visitors see the photo (so the link never leads to a 404).
    pub async fn public_folder(
        &self,
        album: Uuid,
        photo: Uuid,
    ) -> Result<Option<(String, String)>> {
        let Some(album) = self.repo.album(None, album).await? else {
            return Ok(None);
        };
        if album.mode != PublishMode::Public || !self.is_live(&album) {
            return Ok(None);
        }
        let folder = self.folder(album.clone()).await?;
        if !folder.visible().any(|i| i.id == photo) {
            return Ok(None);
        }
        let aliases = self.repo.aliases_of(album.id).await?;
        let primary = aliases.iter().find(|a| a.state == AliasState::Current);
        let path = urls::public_album(primary.map(|a| a.alias.as_str()), album.id);
        Ok(Some((urls::in_folder(&path, photo), album.name)))
    }

    pub async fn visit_photo(&self, address: &Address, photo: Uuid) -> Result<Visit> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            Err(to) => return Ok(Visit::Redirect(urls::in_folder(&to, photo))),
        };
        let unlisted = found.album.mode == PublishMode::Unlisted;
        let folder = self.folder(found.album).await?;
        let visible: Vec<&Image> = folder.visible().collect();
        let at = visible
            .iter()
            .position(|i| i.id == photo)
            .ok_or(Error::NotFound)?;
        let view = self.views(&folder, &[visible[at]]).await?;
        let view = view.first().ok_or(Error::NotFound)?;
        let link = |i: usize| visible.get(i).map(|p| urls::in_folder(&found.base, p.id));
        let prev = at.checked_sub(1).and_then(link);
        let next = link(at + 1);
        // The grid page that holds the photo: after the last photo of the
        // page before it (`visitors::page` cuts PAGE_SIZE at a time).
        let page_start = at - at % PAGE_SIZE;
        let back = match page_start.checked_sub(1).map(|i| visible[i].id) {
            Some(before) => format!("{}?after={}#photo-{photo}", found.base, cursor(before)),
            None => format!("{}#photo-{photo}", found.base),
        };
        let page_url = urls::absolute(&self.base_url, &urls::in_folder(&found.base, photo));
        let page = Viewer {
            photo: view,
            folder: &folder.album.name,
            stylesheet: urls::routes::STYLESHEET,
            favicon: urls::routes::FAVICON,
            noindex: unlisted,
            page_url: &page_url,
            back: &back,
            prev: prev.as_deref(),
            next: next.as_deref(),
            position: at + 1,
            total: visible.len(),
            download: folder.policy().allow_download,
        };
        Ok(Visit::Page {
            html: html::render(&page)?,
            unlisted,
        })
    }
}
