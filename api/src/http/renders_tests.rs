//! `renders`' parsing of paths, versions and ranges.

use super::{parse_range, Unsatisfiable};
use axum::http::HeaderValue;

fn r(v: &str, size: u64) -> Result<Option<(u64, u64)>, Unsatisfiable> {
    parse_range(Some(&HeaderValue::from_str(v).unwrap()), size)
}

#[test]
fn only_plain_render_paths_skip_the_router() {
    use super::plain_path;
    let id = "10177901-4db0-4293-8947-d30fa797ad9c";
    let ok = format!("/i/{id}/large.webp");
    assert_eq!(plain_path(&ok), Some((id, "large.webp")));
    for other in [
        format!("/i/{id}/%6Carge.webp"),
        format!("/i/{id}/large.webp/"),
        format!("/i/{id}/a/large.webp"),
        format!("/i/{id}/"),
        "/i//large.webp".to_owned(),
        format!("/x/{id}/large.webp"),
        "/i/".to_owned(),
    ] {
        assert_eq!(plain_path(&other), None, "{other}");
    }
}

#[test]
fn versions_asked() {
    use super::version_asked;
    assert_eq!(version_asked(None), Ok(None));
    assert_eq!(version_asked(Some("v=3")), Ok(Some(3)));
    assert_eq!(version_asked(Some("dl=a.webp&v=2")), Ok(Some(2)));
    assert_eq!(version_asked(Some("v=2&dl=a")), Ok(Some(2)));
    assert_eq!(version_asked(Some("v=two")), Err(()));
    assert_eq!(version_asked(Some("v=1&v=2")), Err(()));
    let others = ["v=01", "v=+1", "v=", "v=1 ", "", "&v=1", "v=1&", "x=1&v=2"];
    for other in others.into_iter().chain(["v=1&dl=a&dl=b", "V=1", "dl"]) {
        assert_eq!(version_asked(Some(other)), Err(()), "{other}");
    }
}

#[test]
fn ranges() {
    assert_eq!(parse_range(None, 10), Ok(None));
    assert_eq!(r("bytes=0-3", 10), Ok(Some((0, 3))));
    assert_eq!(r("bytes=5-", 10), Ok(Some((5, 9))));
    assert_eq!(r("bytes=-4", 10), Ok(Some((6, 9))));
    assert_eq!(r("bytes=2-99", 10), Ok(Some((2, 9))));
    assert_eq!(r("bytes=0-1,4-5", 10), Ok(None));
    assert_eq!(r("bytes=10-", 10), Err(Unsatisfiable));
    assert_eq!(r("bytes=4-2", 10), Ok(None));
    assert_eq!(r("bytes=x-y", 10), Ok(None));
    assert_eq!(r("bytes=abc", 10), Ok(None));
    assert_eq!(r("=0-1", 10), Ok(None));
    assert_eq!(r("bytes=-0", 10), Err(Unsatisfiable));
    assert_eq!(r("bytes=99999999999999999999-", 10), Err(Unsatisfiable));
    assert_eq!(r("bytes=2-99999999999999999999", 10), Ok(Some((2, 9))));
}
