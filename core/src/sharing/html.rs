//! The visitor markup, rendered by askama (every value escaped) from the
//! templates in `core/templates`, the one folder that holds them all. The
//! grid fragment is what `album.preview` returns and what the pages embed.

use super::view::PhotoView;
use crate::{Error, Result};
use askama::Template;
use lightbox_domain::album::CoverFocus;

/// Served at `/static/lightbox.css`; pages need no inline style or script.
pub const STYLESHEET: &str = include_str!("../../templates/lightbox.css");

/// Served at `/favicon.ico` (as SVG, which browsers take at any path).
pub const FAVICON: &str = include_str!("../../templates/favicon.svg");

#[derive(Template)]
#[template(path = "grid.html")]
pub struct Grid<'a> {
    pub photos: &'a [PhotoView],
    pub download: bool,
    pub first_page: bool,
    pub next_after: &'a str,
}

#[derive(Template)]
#[template(path = "album.html")]
pub struct AlbumPage<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub stylesheet: &'a str,
    pub favicon: &'a str,
    pub noindex: bool,
    pub page_url: &'a str,
    /// The cover's largest render, for previews when the link is shared.
    pub og_image: Option<&'a PhotoView>,
    pub feed_url: Option<&'a str>,
    pub cover: Option<&'a str>,
    pub cover_focus: CoverFocus,
    /// `cover_focus: smart`: the point to hold, in tenths (CSS classes).
    pub cover_at: Option<(u8, u8)>,
    pub download_url: Option<&'a str>,
    pub grid: &'a str,
}

pub struct FeedEntry {
    pub id: String,
    pub title: String,
    pub updated: String,
    /// Markup for `<content type="html">`; the template escapes it once more.
    pub html: String,
}

#[derive(Template)]
#[template(path = "feed.xml")]
pub struct Feed<'a> {
    /// The folder's id: the feed's `urn:uuid:` id, which no rename changes.
    pub id: &'a str,
    pub name: &'a str,
    pub description: &'a str,
    pub page_url: &'a str,
    pub self_url: &'a str,
    pub updated: &'a str,
    pub entries: &'a [FeedEntry],
}

#[derive(Template)]
#[template(
    source = "<p><img src=\"{{ src }}\" alt=\"{{ title }}\"></p>{% if !description.is_empty() %}<p>{{ description }}</p>{% endif %}",
    ext = "html"
)]
pub struct FeedContent<'a> {
    pub src: &'a str,
    pub title: &'a str,
    pub description: &'a str,
}

/// `/p/{id}`: one public photo.
#[derive(Template)]
#[template(path = "photo.html")]
pub struct PhotoPage {
    /// The photo in its public folder, and the folder's name.
    pub back: Option<(String, String)>,
    pub page_url: String,
    pub favicon: &'static str,
    pub title: String,
    pub description: String,
    pub og_image: Option<String>,
    pub src: Option<String>,
    pub srcset: String,
    pub width: u32,
    pub height: u32,
    pub facts: Vec<(&'static str, String)>,
    /// The placeholder as a `data:` image, painted under the photo.
    pub placeholder: Option<String>,
}

/// A photo within its folder (`viewer.html`).
#[derive(Template)]
#[template(path = "viewer.html")]
pub struct Viewer<'a> {
    pub photo: &'a PhotoView,
    pub folder: &'a str,
    pub stylesheet: &'a str,
    pub favicon: &'a str,
    pub noindex: bool,
    pub page_url: &'a str,
    pub back: &'a str,
    pub prev: Option<&'a str>,
    pub next: Option<&'a str>,
    /// 1-based place in the folder, of `total`.
    pub position: i64,
    pub total: i64,
    pub download: bool,
}

/// What a browser gets instead of a JSON error or a bare 404.
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage<'a> {
    pub status: u16,
    pub title: &'a str,
    pub message: &'a str,
}

impl ErrorPage<'_> {
    /// The page for a status, in words a visitor can act on.
    pub fn for_status(status: u16) -> ErrorPage<'static> {
        let (title, message) = match status {
            401 => (
                "This link does not open anything",
                "It has expired or is not a link for this page. Ask the person who sent it for a new one.",
            ),
            403 => ("Not allowed", "This link does not allow that."),
            404 => (
                "Nothing here",
                "There is no page at this address, or it is no longer shared.",
            ),
            409 => (
                "Not ready",
                "What this link points at is not available right now. Try again later.",
            ),
            429 | 503 => ("Busy", "Too many requests right now. Try again in a moment."),
            _ => ("Something went wrong", "Try again later."),
        };
        ErrorPage {
            status,
            title,
            message,
        }
    }
}

pub fn render(t: &impl Template) -> Result<String> {
    t.render().map_err(|e| Error::Internal(e.into()))
}
