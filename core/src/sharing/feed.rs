//! The Atom feed of a public album whose policy has `feed` on
//! (`feed.xml` under its page): its newest `FEED_SIZE` visible photos.

use super::html::{self, Feed, FeedContent, FeedEntry};
use super::visitors::{Address, Served, FEED_SIZE};
use super::Sharing;
use crate::{time, Error, Result};
use lightbox_domain::album::PublishMode;
use lightbox_domain::urls;

impl Sharing {
    /// The Atom feed of a public folder whose policy has `feed` on.
    pub async fn feed(&self, address: &Address) -> Result<Served<String>> {
        let found = match self.find(address).await? {
            Ok(f) => f,
            Err(to) => return Ok(Served::Moved(to)),
        };
        let shared = self.shared(found.album);
        if shared.album.mode != PublishMode::Public || !shared.policy().feed {
            return Err(Error::NotFound);
        }
        let visible = shared
            .page(None, FEED_SIZE as u32)
            .await?
            .unwrap_or_default();
        let photos = self.views(&shared, &visible).await?;
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
        let updated = newest.or(shared.album.published_at).unwrap_or_default();
        let page_url = urls::absolute(&self.base_url, &found.base);
        let id = shared.album.id.to_string();
        let feed = Feed {
            id: &id,
            name: &shared.album.name,
            description: &shared.album.description,
            self_url: &urls::feed(&page_url),
            page_url: &page_url,
            updated: &time::rfc3339(updated),
            entries: &entries,
        };
        html::render(&feed).map(Served::Here)
    }
}
