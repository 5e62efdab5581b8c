//! What visitors get: the folder pages (`/s/{token}`, `/a/{alias}`,
//! `/albums/{id}`), the owner's preview of them, the Atom feed, the zip of
//! a folder that allows downloads, and a public photo's page (`/p/{id}`).
//! Anything that is not live resolves to 2001, which the routes answer
//! with a bare 404.

use super::html::{self, AlbumPage, Grid, PhotoPage};
use super::stats::Stats;
use super::view::{album_exif, facts, photo_view, whole_frames, zip_entries, PhotoView};
use super::{SharedAlbum, Sharing};
use crate::archive::Entry;
use crate::auth::secrets;
use crate::images::Images;
use crate::{Error, Result};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use lightbox_domain::album::PublishMode;
use lightbox_domain::album::{Album, CoverFocus};
use lightbox_domain::alias::{self, AliasState};
use lightbox_domain::image::Image;
use lightbox_domain::sharing::{visitor_state, VisitorState};
use lightbox_domain::urls;
use serde::Serialize;
use uuid::Uuid;

/// Photos per grid fragment.
pub const PAGE_SIZE: usize = 48;
/// Entries of the Atom feed.
pub const FEED_SIZE: usize = 50;

/// How a visitor names a folder.
#[derive(Debug, Clone)]
pub enum Address {
    Token(String),
    Alias(String),
    Album(Uuid),
}

impl Address {
    /// The page's path as the visitor reached it.
    pub fn path(&self) -> String {
        match self {
            Address::Token(t) => urls::shared(t),
            Address::Alias(a) => urls::alias(a),
            Address::Album(id) => urls::album(*id),
        }
    }
}

/// A folder's feed or zip, or the folder page a previous alias now
/// points to (the route adds its own file name).
pub enum Served<T> {
    Here(T),
    Moved(String),
}

pub enum Visit {
    Page {
        html: String,
        unlisted: bool,
    },
    /// A previous alias: 301 to the primary one.
    Redirect(String),
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Preview {
    pub html: String,
    pub stylesheet_url: String,
    pub visitor_state: VisitorState,
    pub stats: Stats,
    pub next_after: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub og_image_url: Option<String>,
}

pub(super) fn cursor(id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(id.as_bytes())
}

fn parse_cursor(after: &str) -> Result<Uuid> {
    let bytes = URL_SAFE_NO_PAD
        .decode(after)
        .map_err(|_| Error::invalid("after", "is not a cursor"))?;
    Uuid::from_slice(&bytes).map_err(|_| Error::invalid("after", "is not a cursor"))
}

/// The grid page after the cursor photo, and the next cursor ("" at the
/// end). A cursor photo that is no longer visible is 2003: start again.
async fn page(shared: &SharedAlbum, after: Option<&str>) -> Result<(Vec<Image>, String)> {
    let from = after
        .filter(|a| !a.is_empty())
        .map(parse_cursor)
        .transpose()?;
    let mut shown = shared
        .page(from, PAGE_SIZE as u32 + 1)
        .await?
        .ok_or(Error::CursorStale)?;
    let more = shown.len() > PAGE_SIZE;
    shown.truncate(PAGE_SIZE);
    let next = match shown.last() {
        Some(last) if more => cursor(last.id),
        _ => String::new(),
    };
    Ok((shown, next))
}

/// A folder found by a visitor's address, with the path it was reached by.
pub(super) struct Found {
    pub album: Album,
    pub base: String,
}

impl Sharing {
    pub(super) async fn views(
        &self,
        shared: &SharedAlbum,
        photos: &[Image],
    ) -> Result<Vec<PhotoView>> {
        let ids: Vec<Uuid> = photos.iter().map(|p| p.id).collect();
        let (renders, details) =
            tokio::try_join!(self.repo.renders_of(&ids), self.repo.details_of(&ids))?;
        Ok(photos
            .iter()
            .filter_map(|p| {
                let shown = album_exif(p, shared.policy());
                let mut view = photo_view(p, &renders, shown, &self.image_host)?;
                let hash = details.iter().find(|(id, _)| *id == p.id);
                let hash = hash.and_then(|(_, d)| d.placeholder.as_deref());
                view.placeholder = hash.and_then(|h| self.placeholders.data_url(h));
                Some(view)
            })
            .collect())
    }

    /// With `cover_focus: smart`, where the cover is held (in tenths of its
    /// width and height): the owner's focal point, else the most salient
    /// point the render job found.
    async fn cover_at(
        &self,
        shared: &SharedAlbum,
        cover: Option<&Image>,
    ) -> Result<Option<(u8, u8)>> {
        let (Some(cover), CoverFocus::Smart) = (cover, shared.policy().cover_focus) else {
            return Ok(None);
        };
        Ok(self.repo.details(cover.id).await?.cover_tenths())
    }

    /// The grid fragment, the next cursor and the page's first photo; each
    /// photo opens its own page under `base` (a visitor's folder page), or
    /// its render (the owner's preview, which has no visitor address).
    async fn grid(
        &self,
        shared: &SharedAlbum,
        after: Option<&str>,
        base: Option<&str>,
    ) -> Result<(String, String, Option<Uuid>)> {
        let (shown, next_after) = page(shared, after).await?;
        let mut photos = self.views(shared, &shown).await?;
        if let Some(base) = base {
            for p in &mut photos {
                p.page = Some(urls::in_album(base, p.id));
            }
        }
        let grid = Grid {
            photos: &photos,
            download: shared.policy().allow_download,
            first_page: after.is_none_or(str::is_empty),
            next_after: &next_after,
        };
        let first = shown.first().map(|i| i.id);
        Ok((html::render(&grid)?, next_after, first))
    }

    async fn cover_view(
        &self,
        shared: &SharedAlbum,
        cover: Option<Image>,
    ) -> Result<Option<PhotoView>> {
        let Some(cover) = cover else { return Ok(None) };
        let views = self.views(shared, &[cover]).await?;
        Ok(views.into_iter().next())
    }

    /// `album.preview`: the folder as a visitor would see it, in any state.
    pub async fn preview(&self, owner: Uuid, album: Uuid, after: Option<&str>) -> Result<Preview> {
        let shared = self.shared(self.owned(owner, album).await?);
        let (html, next_after, _) = self.grid(&shared, after, None).await?;
        let stats = shared.stats().await?;
        let any_visible = stats.visible > 0;
        Ok(Preview {
            html,
            stylesheet_url: urls::absolute(&self.base_url, urls::routes::STYLESHEET),
            visitor_state: visitor_state(&shared.album, self.server_publishing, any_visible),
            stats,
            next_after,
            og_image_url: self
                .cover_view(&shared, shared.cover().await?.0)
                .await?
                .map(|v| v.full),
        })
    }

    async fn live(&self, id: Uuid, mode: PublishMode) -> Result<Album> {
        let album = self.repo.album(None, id).await?.ok_or(Error::NotFound)?;
        if !self.is_live(&album) || album.mode != mode {
            return Err(Error::NotFound);
        }
        Ok(album)
    }

    /// The folder an address names, or where a previous alias now points.
    pub(super) async fn find(
        &self,
        address: &Address,
    ) -> Result<std::result::Result<Found, String>> {
        let mut base = address.path();
        let album = match address {
            Address::Token(token) => {
                let link = self.repo.link_by_hash(&secrets::hash(token)).await?;
                let link = link.filter(|l| l.is_live()).ok_or(Error::NotFound)?;
                self.live(link.album_id, PublishMode::Unlisted).await?
            }
            Address::Alias(name) => {
                let name = name.to_lowercase();
                base = urls::alias(&name);
                // Nothing malformed reaches the database (PostgreSQL refuses a NUL).
                if !alias::syntax_ok(&name) {
                    return Err(Error::NotFound);
                }
                let row = self.repo.alias(&name).await?.ok_or(Error::NotFound)?;
                let album = self.live(row.album_id, PublishMode::Public).await?;
                match row.state {
                    AliasState::Current => album,
                    AliasState::Previous => {
                        let all = self.repo.aliases_of(album.id).await?;
                        let primary = all.iter().find(|a| a.state == AliasState::Current);
                        let primary = primary.map(|p| p.alias.as_str());
                        return Ok(Err(urls::public_album(primary, album.id)));
                    }
                    AliasState::Expired | AliasState::Released => return Err(Error::NotFound),
                }
            }
            Address::Album(id) => self.live(*id, PublishMode::Public).await?,
        };
        Ok(Ok(Found { album, base }))
    }

    /// A visitor page, or where a previous alias now points.
    pub async fn visit(&self, address: &Address, after: Option<&str>) -> Result<Visit> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            // An old link to a later grid page lands on that page.
            Err(to) => {
                let to = match after.filter(|a| !a.is_empty()) {
                    Some(a) => {
                        let a: String = form_urlencoded::byte_serialize(a.as_bytes()).collect();
                        format!("{to}?after={a}")
                    }
                    None => to,
                };
                return Ok(Visit::Redirect(to));
            }
        };
        let unlisted = found.album.mode == PublishMode::Unlisted;
        let shared = self.shared(found.album);
        let (grid, _, first) = self.grid(&shared, after, Some(&found.base)).await?;
        let (cover, _) = shared.cover().await?;
        let cover_at = self.cover_at(&shared, cover.as_ref()).await?;
        let cover = self.cover_view(&shared, cover).await?;
        // The automatic cover is the grid's first photo: shown at the top
        // of the first page it would repeat right above itself.
        let repeats = after.is_none_or(str::is_empty) && cover.as_ref().map(|c| c.id) == first;
        let header = cover.as_ref().filter(|_| !repeats).map(|c| c.full.as_str());
        let feed = urls::feed(&found.base);
        let zip = urls::zip(&found.base);
        let page_url = urls::absolute(&self.base_url, &found.base);
        let a = &shared.album;
        let page = AlbumPage {
            name: &a.name,
            description: &a.description,
            stylesheet: urls::routes::STYLESHEET,
            favicon: urls::routes::FAVICON,
            noindex: unlisted,
            page_url: &page_url,
            og_image: cover.as_ref(),
            feed_url: (a.policy.feed && !unlisted).then_some(feed.as_str()),
            cover: header,
            cover_focus: a.policy.cover_focus,
            cover_at,
            download_url: a.policy.allow_download.then_some(zip.as_str()),
            grid: &grid,
        };
        Ok(Visit::Page {
            html: html::render(&page)?,
            unlisted,
        })
    }

    /// The folder whose zip a visitor asks for, when its policy allows
    /// downloads. Apart from `visitor_archive`, so the caller can count the
    /// zip against the folder (by id, however the address was spelt)
    /// before the photos are listed.
    pub async fn downloadable(&self, address: &Address) -> Result<Served<Album>> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            Err(to) => return Ok(Served::Moved(to)),
        };
        if !found.album.policy.allow_download {
            return Err(Error::NotFound);
        }
        Ok(Served::Here(found.album))
    }

    /// The zip a visitor downloads of a `downloadable` folder: the largest
    /// whole-frame render of every visible photo (never an original).
    pub async fn visitor_archive(&self, album: Album) -> Result<Vec<Entry>> {
        let shared = self.shared(album);
        let visible = shared.all_visible().await?;
        let renders = self.renders_of(&visible).await?;
        Ok(zip_entries(&visible, &renders, false))
    }
}

/// `/p/{id}`: the page of a photo `image.getPublic` shows, with the way
/// to its folder when that folder is public.
pub async fn photo_page(images: &Images, sharing: &Sharing, id: Uuid) -> Result<String> {
    let public = images.get_public(id).await?;
    let album = images.repo.image(None, id).await?.map(|i| i.album_id);
    let back = match album {
        Some(a) => sharing.public_album(a, id).await?,
        None => None,
    };
    let frames = whole_frames(public.width, public.height, &public.renders);
    let main = frames.last().copied();
    let page = PhotoPage {
        back,
        page_url: urls::absolute(&sharing.base_url, &urls::photo(id)),
        favicon: urls::routes::FAVICON,
        title: public.title.clone(),
        description: public.description.clone(),
        og_image: main.map(|r| r.url.clone()),
        src: main.map(|r| r.url.clone()),
        srcset: frames
            .iter()
            .map(|r| format!("{} {}w", r.url, r.width))
            .collect::<Vec<_>>()
            .join(", "),
        width: main.map_or(0, |r| r.width),
        height: main.map_or(0, |r| r.height),
        facts: facts(&public.exif),
        placeholder: public
            .placeholder
            .as_deref()
            .and_then(|h| sharing.placeholders.data_url(h)),
    };
    html::render(&page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let id = crate::ids::new_id();
        assert_eq!(parse_cursor(&cursor(id)).unwrap(), id);
        assert!(matches!(parse_cursor("%%"), Err(Error::Validation(_))));
    }
}
