//! Server-rendered pages for visitors: `/p/{id}`, a public photo. Built
//! with askama, which escapes every value; no script, a strict CSP, and a
//! plain 404 that says nothing for anything that is not public.

use crate::state::AppState;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::images::dto::{PublicExif, PublicImage, RenderDto};
use uuid::Uuid;

#[derive(Template)]
#[template(path = "photo.html")]
struct PhotoPage {
    title: String,
    description: String,
    og_image: Option<String>,
    src: Option<String>,
    srcset: String,
    width: u32,
    height: u32,
    facts: Vec<(&'static str, String)>,
}

fn not_found() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (StatusCode::NOT_FOUND, headers, "not found\n").into_response()
}

/// The renders that show the whole frame (not crops), smallest first.
fn whole_frames(p: &PublicImage) -> Vec<&RenderDto> {
    let aspect = p.width as f64 / p.height.max(1) as f64;
    let mut v: Vec<&RenderDto> = p
        .renders
        .iter()
        .filter(|r| (r.width as f64 / r.height.max(1) as f64 - aspect).abs() < 0.02)
        .collect();
    v.sort_by_key(|r| r.width);
    v
}

fn facts(e: &PublicExif) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(t) = &e.taken_at {
        out.push(("Taken", t.clone()));
    }
    let camera = [&e.camera_make, &e.camera_model]
        .iter()
        .filter_map(|s| s.as_deref())
        .collect::<Vec<_>>()
        .join(" ");
    if !camera.is_empty() {
        out.push(("Camera", camera));
    }
    if let Some(lens) = &e.lens {
        out.push(("Lens", lens.clone()));
    }
    if let Some(s) = &e.settings {
        let parts = [
            s.f_number.map(|f| format!("f/{f:.1}")),
            s.exposure_time.as_ref().map(|t| format!("{t} s")),
            s.iso.map(|i| format!("ISO {i}")),
            s.focal_length_mm.map(|f| format!("{f:.0} mm")),
        ];
        let text = parts.into_iter().flatten().collect::<Vec<_>>().join(" · ");
        if !text.is_empty() {
            out.push(("Settings", text));
        }
    }
    if let Some(g) = &e.gps {
        out.push(("Location", format!("{:.5}, {:.5}", g.lat, g.lon)));
    }
    out
}

/// `default-src 'none'`: images only from this service and its image host.
fn csp(image_host: &str) -> String {
    format!(
        "default-src 'none'; img-src 'self' {image_host}; style-src 'unsafe-inline'; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

pub async fn photo(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let Ok(id) = Uuid::parse_str(&id) else {
        return not_found();
    };
    let Ok(public) = state.images.get_public(id).await else {
        return not_found();
    };
    let frames = whole_frames(&public);
    let main = frames.last().copied();
    let page = PhotoPage {
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
    };
    let html = match page.render() {
        Ok(h) => h,
        Err(e) => return super::errors::from_error(lightbox_core::Error::Internal(e.into())),
    };
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
        (
            header::CONTENT_SECURITY_POLICY,
            csp(&state.images.image_host),
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (
            header::REFERRER_POLICY,
            "strict-origin-when-cross-origin".to_owned(),
        ),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    (StatusCode::OK, headers, html).into_response()
}
