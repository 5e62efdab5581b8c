//! What visitors get: the folder pages (`/s/{token}`, `/a/{alias}`,
//! `/albums/{id}`), the owner's preview of them, the Atom feed and the
//! zip of a folder that allows downloads. Anything that is not live
//! resolves to 2001, which the routes answer with a bare 404.

use super::html::{self, AlbumPage, Feed, FeedContent, FeedEntry, Grid};
use super::stats::{stats, Stats};
use super::view::{photo_view, zip_entries, PhotoView};
use super::{Folder, Sharing, PRIVATE, PUBLIC, UNLISTED};
use crate::archive::Entry;
use crate::auth::secrets;
use crate::db::{AlbumRow, ImageRow};
use crate::{time, Error, Result};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
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

pub enum Visit {
    Page {
        html: String,
        unlisted: bool,
    },
    /// A previous alias: 301 to the primary one.
    Redirect(String),
}

#[derive(Debug, Serialize)]
pub struct Preview {
    pub html: String,
    pub stylesheet_url: String,
    pub visitor_state: &'static str,
    pub stats: Stats,
    pub next_after: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub og_image_url: Option<String>,
}

fn cursor(id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(id.as_bytes())
}

fn parse_cursor(after: &str) -> Result<Uuid> {
    let bytes = URL_SAFE_NO_PAD
        .decode(after)
        .map_err(|_| Error::invalid("after", "is not a cursor"))?;
    Uuid::from_slice(&bytes).map_err(|_| Error::invalid("after", "is not a cursor"))
}

/// The photos after the cursor photo, and the next cursor ("" at the end).
/// A cursor photo that is no longer visible is 2003: start again.
fn page<'a>(visible: &[&'a ImageRow], after: Option<&str>) -> Result<(Vec<&'a ImageRow>, String)> {
    let start = match after.filter(|a| !a.is_empty()) {
        None => 0,
        Some(a) => {
            let id = parse_cursor(a)?;
            let at = visible.iter().position(|i| i.id == id);
            at.ok_or(Error::CursorStale)? + 1
        }
    };
    let rest = visible.get(start..).unwrap_or_default();
    let shown: Vec<&ImageRow> = rest.iter().take(PAGE_SIZE).copied().collect();
    let next = match shown.last() {
        Some(last) if rest.len() > PAGE_SIZE => cursor(last.id),
        _ => String::new(),
    };
    Ok((shown, next))
}

/// A folder found by a visitor's address, with the path it was reached by.
struct Found {
    album: AlbumRow,
    base: String,
}

impl Sharing {
    fn visitor_state(&self, folder: &Folder) -> &'static str {
        let a = &folder.album;
        if a.taken_down_at.is_some() {
            "taken_down"
        } else if a.mode == PRIVATE || !self.server_publishing {
            "private"
        } else if folder.visible().next().is_none() {
            "empty"
        } else {
            "visible"
        }
    }

    async fn views(&self, folder: &Folder, photos: &[&ImageRow]) -> Result<Vec<PhotoView>> {
        let renders = self.renders_of(photos).await?;
        let mut views = Vec::with_capacity(photos.len());
        for p in photos {
            if let Some(v) = photo_view(p, &renders, &folder.policy, &self.image_host)? {
                views.push(v);
            }
        }
        Ok(views)
    }

    /// The grid fragment and the next cursor.
    async fn grid(&self, folder: &Folder, after: Option<&str>) -> Result<(String, String)> {
        let visible: Vec<&ImageRow> = folder.visible().collect();
        let (shown, next_after) = page(&visible, after)?;
        let photos = self.views(folder, &shown).await?;
        let grid = Grid {
            photos: &photos,
            download: folder.policy.allow_download,
            first_page: after.is_none_or(str::is_empty),
            next_after: &next_after,
        };
        Ok((html::render(&grid)?, next_after))
    }

    async fn cover_url(&self, folder: &Folder) -> Result<Option<String>> {
        let (cover, _) = folder.cover();
        let Some(cover) = cover else { return Ok(None) };
        let views = self.views(folder, &[cover]).await?;
        Ok(views.into_iter().next().map(|v| v.full))
    }

    /// `album.preview`: the folder as a visitor would see it, in any state.
    pub async fn preview(&self, owner: Uuid, album: Uuid, after: Option<&str>) -> Result<Preview> {
        let folder = self.folder(self.owned(owner, album).await?).await?;
        let (html, next_after) = self.grid(&folder, after).await?;
        Ok(Preview {
            html,
            stylesheet_url: format!("{}{}", self.base_url, html::STYLESHEET_PATH),
            visitor_state: self.visitor_state(&folder),
            stats: stats(&folder.images, &folder.policy),
            next_after,
            og_image_url: self.cover_url(&folder).await?,
        })
    }

    async fn live(&self, id: Uuid, mode: &str) -> Result<AlbumRow> {
        let album = self.repo.album(None, id).await?.ok_or(Error::NotFound)?;
        if !self.is_live(&album) || album.mode != mode {
            return Err(Error::NotFound);
        }
        Ok(album)
    }

    async fn find(&self, address: &Address) -> Result<std::result::Result<Found, String>> {
        match address {
            Address::Token(token) => {
                let link = self.repo.link_by_hash(&secrets::hash(token)).await?;
                let link = link.filter(|l| l.retired_at.is_none());
                let album = self.live(link.ok_or(Error::NotFound)?.album_id, UNLISTED);
                let base = format!("/s/{token}");
                Ok(Ok(Found {
                    album: album.await?,
                    base,
                }))
            }
            Address::Alias(alias) => {
                let alias = alias.to_lowercase();
                // Nothing malformed reaches the database (PostgreSQL refuses a NUL).
                if !super::aliases::syntax_ok(&alias) {
                    return Err(Error::NotFound);
                }
                let row = self.repo.alias(&alias).await?.ok_or(Error::NotFound)?;
                let album = self.live(row.album_id, PUBLIC).await?;
                match row.state.as_str() {
                    "current" => Ok(Ok(Found {
                        album,
                        base: format!("/a/{alias}"),
                    })),
                    "previous" => {
                        let all = self.repo.aliases_of(album.id).await?;
                        let primary = all.iter().find(|a| a.state == "current");
                        Ok(Err(match primary {
                            Some(p) => format!("/a/{}", p.alias),
                            None => format!("/albums/{}", album.id),
                        }))
                    }
                    _ => Err(Error::NotFound),
                }
            }
            Address::Album(id) => Ok(Ok(Found {
                album: self.live(*id, PUBLIC).await?,
                base: format!("/albums/{id}"),
            })),
        }
    }

    /// A visitor page, or where a previous alias now points.
    pub async fn visit(&self, address: &Address, after: Option<&str>) -> Result<Visit> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            Err(to) => return Ok(Visit::Redirect(to)),
        };
        let unlisted = found.album.mode == UNLISTED;
        let folder = self.folder(found.album).await?;
        let (grid, _) = self.grid(&folder, after).await?;
        let cover = self.cover_url(&folder).await?;
        let feed = format!("{}/feed.xml", found.base);
        let zip = format!("{}/download.zip", found.base);
        let a = &folder.album;
        let page = AlbumPage {
            name: &a.name,
            description: &a.description,
            stylesheet: html::STYLESHEET_PATH,
            noindex: unlisted,
            og_image: cover.as_deref(),
            feed_url: (folder.policy.feed && !unlisted).then_some(feed.as_str()),
            cover: cover.as_deref(),
            cover_focus: &folder.policy.cover_focus,
            download_url: folder.policy.allow_download.then_some(zip.as_str()),
            grid: &grid,
        };
        Ok(Visit::Page {
            html: html::render(&page)?,
            unlisted,
        })
    }

    /// The Atom feed of a public folder whose policy has `feed` on.
    pub async fn feed(&self, address: &Address) -> Result<String> {
        let found = self.find(address).await?.map_err(|_| Error::NotFound)?;
        let folder = self.folder(found.album).await?;
        if folder.album.mode != PUBLIC || !folder.policy.feed {
            return Err(Error::NotFound);
        }
        let visible: Vec<&ImageRow> = folder.visible().take(FEED_SIZE).collect();
        let photos = self.views(&folder, &visible).await?;
        let mut entries = Vec::with_capacity(photos.len());
        for p in &photos {
            let content = FeedContent {
                src: &p.src,
                title: &p.title,
                description: &p.description,
            };
            entries.push(FeedEntry {
                id: p.id.to_string(),
                title: p.title.clone(),
                updated: time::rfc3339(p.created_at),
                html: html::render(&content)?,
            });
        }
        let newest = photos.iter().map(|p| p.created_at).max();
        let updated = newest.or(folder.album.published_at).unwrap_or_default();
        let page_url = format!("{}{}", self.base_url, found.base);
        let feed = Feed {
            name: &folder.album.name,
            description: &folder.album.description,
            self_url: &format!("{page_url}/feed.xml"),
            page_url: &page_url,
            updated: &time::rfc3339(updated),
            entries: &entries,
        };
        html::render(&feed)
    }

    /// The zip a visitor downloads: the largest whole-frame render of
    /// every visible photo (never an original), when the policy allows it.
    pub async fn visitor_archive(&self, address: &Address) -> Result<Vec<Entry>> {
        let found = self.find(address).await?.map_err(|_| Error::NotFound)?;
        let folder = self.folder(found.album).await?;
        if !folder.policy.allow_download {
            return Err(Error::NotFound);
        }
        let visible: Vec<&ImageRow> = folder.visible().collect();
        let renders = self.renders_of(&visible).await?;
        Ok(zip_entries(&visible, &renders, false))
    }
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
