//! Every public URL shape, in one place: the route patterns the API
//! serves and the builders that format links to them. A path here is
//! relative to the base URL (or, for renders, the image host).

use uuid::Uuid;

/// Route patterns (axum syntax), next to the builders below.
pub mod routes {
    pub const RPC: &str = "/rpc";
    pub const RPC_NAMED: &str = "/rpc/{method}";
    pub const HEALTHZ: &str = "/healthz";
    pub const READYZ: &str = "/readyz";
    pub const METRICS: &str = "/metrics";
    pub const UPLOAD: &str = "/api/v1/images";
    pub const RENDER: &str = "/i/{id}/{file}";
    pub const IMAGE_ARCHIVE: &str = "/api/v1/images/{id}/archive";
    pub const IMAGE_DOWNLOAD: &str = "/api/v1/images/{id}/download";
    pub const ALBUM_DOWNLOAD: &str = "/api/v1/albums/{id}/download";
    pub const PHOTO: &str = "/p/{id}";
    pub const SHARED: &str = "/s/{token}";
    pub const SHARED_ZIP: &str = "/s/{token}/download.zip";
    pub const ALIAS: &str = "/a/{alias}";
    pub const ALIAS_FEED: &str = "/a/{alias}/feed.xml";
    pub const ALIAS_ZIP: &str = "/a/{alias}/download.zip";
    pub const ALBUM: &str = "/albums/{id}";
    pub const ALBUM_FEED: &str = "/albums/{id}/feed.xml";
    pub const ALBUM_ZIP: &str = "/albums/{id}/download.zip";
    /// A photo seen within its folder.
    pub const SHARED_PHOTO: &str = "/s/{token}/{photo}";
    pub const ALIAS_PHOTO: &str = "/a/{alias}/{photo}";
    pub const ALBUM_PHOTO: &str = "/albums/{id}/{photo}";
    pub const STYLESHEET: &str = "/static/lightbox.css";
    pub const FAVICON: &str = "/favicon.ico";
}

/// `renders[].url`: `{image_host}/i/{id}/{code}.{ext}?v={n}`.
pub fn render(image_host: &str, image: Uuid, code: &str, ext: &str, version: i64) -> String {
    format!("{image_host}/i/{image}/{code}.{ext}?v={version}")
}

/// An unlisted folder's page: `/s/{token}`.
pub fn shared(token: &str) -> String {
    format!("/s/{token}")
}

/// A public folder's page by alias: `/a/{alias}`.
pub fn alias(alias: &str) -> String {
    format!("/a/{alias}")
}

/// A public folder's page by id: `/albums/{id}`.
pub fn album(id: Uuid) -> String {
    format!("/albums/{id}")
}

/// A public folder's address: its primary alias, or its id.
pub fn public_album(primary_alias: Option<&str>, id: Uuid) -> String {
    match primary_alias {
        Some(a) => alias(a),
        None => album(id),
    }
}

/// A photo's own page: `/p/{id}`.
pub fn photo(id: Uuid) -> String {
    format!("/p/{id}")
}

/// The Atom feed under a folder page.
pub fn feed(page: &str) -> String {
    format!("{page}/feed.xml")
}

/// A photo's page within the folder page it was reached from.
pub fn in_album(page: &str, photo: Uuid) -> String {
    format!("{page}/{photo}")
}

/// The visitor zip under a folder page.
pub fn zip(page: &str) -> String {
    format!("{page}/download.zip")
}

/// `ownerStatus.manage_url`.
pub fn manage_album(id: Uuid) -> String {
    format!("/manage/albums/{id}")
}

/// The signed link of `image.archiveToken`.
pub fn image_archive(id: Uuid, token: &str) -> String {
    format!("/api/v1/images/{id}/archive?token={token}")
}

/// The signed link of `image.downloadToken`.
pub fn image_download(id: Uuid, token: &str) -> String {
    format!("/api/v1/images/{id}/download?token={token}")
}

/// The signed link of `album.downloadToken`.
pub fn album_download(id: Uuid, token: &str) -> String {
    format!("/api/v1/albums/{id}/download?token={token}")
}

/// An absolute address from a path and the base URL.
pub fn absolute(base_url: &str, path: &str) -> String {
    format!("{base_url}{path}")
}
