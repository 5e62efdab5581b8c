//! The rules, table by table: each row is a case a reader can check
//! against ../shared/spec/decisions.md without starting a server.

use super::accounts::{normalize_scopes, Scope};
use super::album::Album;
use super::album::{Order, Policy, PolicyPatch, PublishMode};
use super::alias::{self, Alias, AliasState, CheckStatus};
use super::availability::{full_state, motion_state, screen_state};
use super::crop::{aimed, desired, takes_point, CropSpec, Format, Mode, SpecSource};
use super::details::{Clip, Details};
use super::downloads::DownloadState;
use super::error::Error;
use super::exif::{visible_exif, ExifInfo, ExifVisibility, Gps, Settings};
use super::focus::{check_point, At, Focus, Point};
use super::image::{Eligibility, Image, ImageStatus, Visibility};
use super::moderation::Takedown;
use super::render::{Produced, Render};
use super::sharing::{
    may_publish, reach_by_id, republish_choices, sharing_state, visitor_state, SharingState,
    TokenChoice, VisitorState,
};
use uuid::Uuid;

const U: Uuid = Uuid::from_u128(1);
const V: Uuid = Uuid::from_u128(2);

fn taken_down() -> Takedown {
    Takedown {
        at: Some(1),
        reason: Some("spam".into()),
    }
}

fn image(status: ImageStatus, w: u32, h: u32) -> Image {
    Image {
        id: U,
        owner_id: U,
        album_id: U,
        title: String::new(),
        description: String::new(),
        status,
        format: Format::Jpg,
        width: w,
        height: h,
        size_bytes: 1,
        original_key: "k".into(),
        exif: ExifInfo::none(),
        exif_visibility: ExifVisibility::default(),
        visibility: None,
        taken_at: None,
        sort_at: 0,
        created_at: 0,
        position: None,
        membership: 0,
        takedown: Takedown::default(),
    }
}

fn album(mode: PublishMode, down: bool) -> Album {
    let mut a = Album::new(U, U, "f", "", 0);
    a.mode = mode;
    if down {
        a.takedown = taken_down();
    }
    a
}

#[test]
fn wire_names_round_trip_through_serde_and_text() {
    fn check<T: Copy + PartialEq + std::fmt::Debug + serde::Serialize>(
        all: &[T],
        name: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) {
        for v in all {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json, serde_json::json!(name(*v)));
            assert_eq!(parse(name(*v)), Some(*v));
        }
    }
    check(ImageStatus::ALL, ImageStatus::as_str, ImageStatus::parse);
    check(Eligibility::ALL, Eligibility::as_str, Eligibility::parse);
    check(PublishMode::ALL, PublishMode::as_str, PublishMode::parse);
    check(SharingState::ALL, SharingState::as_str, SharingState::parse);
    check(AliasState::ALL, AliasState::as_str, AliasState::parse);
    check(
        DownloadState::ALL,
        DownloadState::as_str,
        DownloadState::parse,
    );
    assert_eq!(Eligibility::TooSmall.as_str(), "too_small");
    assert_eq!(
        SharingState::PublishingDisabled.as_str(),
        "publishing_disabled"
    );
    assert_eq!(PublishMode::choices(), "private, unlisted or public");
    assert_eq!(
        PublishMode::refusal(),
        "must be private, unlisted or public"
    );
    assert_eq!(ImageStatus::parse("READY"), None);
}

#[test]
fn eligibility_for_every_case() {
    let cases = [
        (ImageStatus::Ready, 1000, 800, false, Eligibility::Visible),
        (ImageStatus::Ready, 199, 150, false, Eligibility::TooSmall),
        (ImageStatus::Ready, 200, 10, false, Eligibility::Visible),
        (
            ImageStatus::Processing,
            1000,
            800,
            false,
            Eligibility::Processing,
        ),
        (ImageStatus::Failed, 1000, 800, false, Eligibility::Failed),
        (ImageStatus::Ready, 1000, 800, true, Eligibility::TakenDown),
        (
            ImageStatus::Processing,
            10,
            10,
            true,
            Eligibility::TakenDown,
        ),
    ];
    for (status, w, h, down, want) in cases {
        let mut i = image(status, w, h);
        if down {
            i.takedown = taken_down();
        }
        assert_eq!(i.eligibility(), want, "{status:?} {w}x{h} down={down}");
    }
}

#[test]
fn exif_groups_need_both_photo_and_policy() {
    let exif = ExifInfo {
        taken_at: Some("2024-01-01T00:00:00Z".into()),
        camera_make: Some("Canon".into()),
        camera_model: Some("R7".into()),
        lens: Some("L".into()),
        gps: Some(Gps { lat: 1.0, lon: 2.0 }),
        settings: Some(Settings {
            iso: Some(100),
            ..Default::default()
        }),
        orientation: 1,
    };
    let all = ExifVisibility {
        gps: true,
        camera: true,
        datetime: true,
        settings: true,
    };
    // (photo group on, policy switch on) -> shown
    for (photo, policy, shown) in [
        (true, true, true),
        (true, false, false),
        (false, true, false),
        (false, false, false),
    ] {
        let vis = ExifVisibility {
            gps: photo,
            camera: photo,
            datetime: photo,
            settings: photo,
        };
        let pol = Policy {
            show_location: policy,
            show_camera: policy,
            show_date: policy,
            ..Policy::default()
        };
        let seen = visible_exif(&exif, pol.allowed_exif(vis));
        assert_eq!(seen.gps.is_some(), shown);
        assert_eq!(seen.camera_make.is_some(), shown);
        assert_eq!(seen.lens.is_some(), shown);
        assert_eq!(seen.taken_at.is_some(), shown);
        // Settings go with the camera switch of the policy.
        assert_eq!(seen.settings.is_some(), shown);
    }
    // The photo's own visibility alone (a photo public itself).
    let own = visible_exif(&exif, ExifVisibility::default());
    assert!(own.gps.is_none() && own.camera_make.is_some());
    assert_eq!(visible_exif(&exif, all).gps, exif.gps);
}

#[test]
fn sharing_state_publishing_off_wins_then_takedown_then_mode() {
    use PublishMode::*;
    let cases = [
        (Private, false, true, SharingState::Private),
        (Unlisted, false, true, SharingState::Live),
        (Public, false, true, SharingState::Live),
        (Public, true, true, SharingState::TakenDown),
        (Private, true, true, SharingState::TakenDown),
        (Public, true, false, SharingState::PublishingDisabled),
        (Private, false, false, SharingState::PublishingDisabled),
    ];
    for (mode, down, publishing, want) in cases {
        assert_eq!(sharing_state(&album(mode, down), publishing), want);
    }
}

#[test]
fn visitor_state_cases() {
    use PublishMode::*;
    let cases = [
        (Public, false, true, true, VisitorState::Visible),
        (Public, false, true, false, VisitorState::Empty),
        (Private, false, true, true, VisitorState::Private),
        (Unlisted, false, false, true, VisitorState::Private),
        (Public, true, true, true, VisitorState::TakenDown),
    ];
    for (mode, down, publishing, any, want) in cases {
        assert_eq!(visitor_state(&album(mode, down), publishing, any), want);
    }
}

#[test]
fn every_publication_state_times_every_target_mode() {
    // (from mode, taken down, server publishing) x target -> outcome
    for from in PublishMode::ALL {
        for down in [false, true] {
            for publishing in [true, false] {
                for to in PublishMode::ALL {
                    let got = may_publish(&album(*from, down), *to, publishing);
                    match (down, publishing, to.is_published()) {
                        (true, _, _) => assert!(matches!(got, Err(Error::TakenDown))),
                        (false, false, true) => assert!(matches!(got, Err(Error::Forbidden))),
                        _ => assert!(got.is_ok(), "{from:?} -> {to:?}"),
                    }
                }
            }
        }
    }
}

#[test]
fn republish_offers_the_remembered_mode_and_its_token_choices() {
    let mut a = album(PublishMode::Private, false);
    assert_eq!(republish_choices(&a, true), None);
    a.last_published_mode = Some(PublishMode::Unlisted);
    let both = vec![TokenChoice::New, TokenChoice::Keep];
    assert_eq!(
        republish_choices(&a, true),
        Some((PublishMode::Unlisted, both))
    );
    assert_eq!(
        republish_choices(&a, false),
        Some((PublishMode::Unlisted, vec![TokenChoice::New]))
    );
    a.last_published_mode = Some(PublishMode::Public);
    assert_eq!(
        republish_choices(&a, true),
        Some((PublishMode::Public, vec![]))
    );
    a.mode = PublishMode::Public;
    assert_eq!(republish_choices(&a, true), None);
}

#[test]
fn reach_by_id_cases() {
    let visible = image(ImageStatus::Ready, 1000, 800);
    let mut public = visible.clone();
    public.visibility = Some(Visibility::Public);
    let mut public_down = public.clone();
    public_down.takedown = taken_down();
    let live = album(PublishMode::Public, false);
    let private = album(PublishMode::Private, false);
    let unlisted = album(PublishMode::Unlisted, false);
    let processing = image(ImageStatus::Processing, 1000, 800);
    let cases: [(&Image, Option<&Album>, bool, bool); 10] = [
        // Publishing off stops a photo made public by itself too.
        (&public, Some(&private), false, false),
        // Only the share link opens an unlisted folder's photos.
        (&visible, Some(&unlisted), true, false),
        (&public, Some(&unlisted), true, true),
        (&public, Some(&private), true, true),
        (&public_down, Some(&live), true, false),
        (&visible, Some(&live), true, true),
        (&visible, Some(&private), true, false),
        (&visible, Some(&live), false, false),
        (&visible, None, true, false),
        (&processing, Some(&live), true, false),
    ];
    for (n, (img, alb, publishing, reached)) in cases.into_iter().enumerate() {
        assert_eq!(
            reach_by_id(img, alb, publishing).is_some(),
            reached,
            "case {n}"
        );
    }
}

#[test]
fn policy_patch_changes_only_what_is_sent() {
    let p = PolicyPatch {
        feed: Some(true),
        order: Some(Order::TakenAsc),
        ..Default::default()
    }
    .apply(Policy::default());
    assert!(p.feed && p.show_date && !p.show_location);
    assert_eq!(p.order, Order::TakenAsc);
    assert_eq!(p.cover_focus, Policy::default().cover_focus);
    assert_eq!(Policy::parse("{}"), Policy::default());
    assert_eq!(Policy::parse("not json"), Policy::default());
}

#[test]
fn alias_states_and_checks() {
    let held = |state, expires_at| Alias {
        alias: "my-trip".into(),
        owner_id: U,
        album_id: U,
        state,
        created_at: 0,
        expires_at,
    };
    let now = 100;
    // (state, expires_at, asking user, status)
    let cases = [
        (AliasState::Current, None, U, CheckStatus::Taken),
        (AliasState::Current, None, V, CheckStatus::Taken),
        (AliasState::Previous, None, U, CheckStatus::Available),
        (AliasState::Previous, None, V, CheckStatus::Taken),
        (AliasState::Expired, None, U, CheckStatus::Available),
        (AliasState::Released, Some(200), V, CheckStatus::Taken),
        (AliasState::Released, Some(50), V, CheckStatus::Available),
    ];
    for (state, exp, user, want) in cases {
        assert_eq!(held(state, exp).check_status(user, now), want, "{state:?}");
    }
    assert!(held(AliasState::Released, Some(200)).is_held(now));
    assert!(!held(AliasState::Released, Some(50)).is_held(now));
    assert!(alias::counts_against_quota(AliasState::Current));
    assert!(alias::counts_against_quota(AliasState::Previous));
    assert!(!alias::counts_against_quota(AliasState::Expired));
    assert_eq!(alias::normalize(" My-Trip ").unwrap(), "my-trip");
    for bad in ["ab", "-ab", "a_b", "admin", &"a".repeat(64)] {
        assert!(alias::normalize(bad).is_err(), "{bad}");
    }
    assert_eq!(
        alias::precheck("admin").map(|p| p.0),
        Some(CheckStatus::Reserved)
    );
    assert_eq!(
        alias::precheck("a!").map(|p| p.0),
        Some(CheckStatus::Invalid)
    );
    assert_eq!(alias::precheck("fine-name"), None);
}

fn render(version: i64, produced: Option<i64>) -> Render {
    Render {
        image_id: U,
        code: "large".into(),
        spec: CropSpec::new("large", 2048, 0, Mode::Fit),
        version,
        produced: produced.map(|v| Produced {
            version: v,
            width: 2048,
            height: 1365,
            size_bytes: 10,
            blob_key: "b".into(),
        }),
    }
}

#[test]
fn download_states() {
    let ready = image(ImageStatus::Ready, 3000, 2000);
    let failed = image(ImageStatus::Failed, 3000, 2000);
    let mut down = ready.clone();
    down.takedown = taken_down();
    use DownloadState::*;
    let cases = [
        (&ready, render(2, Some(2)), None, Ready),
        (&ready, render(2, Some(2)), Some(2), Ready),
        (&ready, render(2, Some(2)), Some(1), Stale),
        (&ready, render(2, Some(1)), None, Preparing),
        (&failed, render(1, None), None, Unavailable),
        (&down, render(1, Some(1)), None, Unavailable),
    ];
    for (img, r, spec, want) in cases {
        assert_eq!(screen_state(img, &r, spec), want);
    }
    assert_eq!(full_state(&ready), Ready);
    assert_eq!(full_state(&failed), Unavailable);
    assert_eq!(full_state(&down), Unavailable);
    // A motion clip: the owner's while the original is, and only if there is one.
    let clip = Clip { offset: 10, len: 5 };
    assert_eq!(clip.range(), 10..15);
    assert_eq!(motion_state(&ready, Some(&clip)), Ready);
    assert_eq!(motion_state(&ready, None), Unavailable);
    assert_eq!(motion_state(&failed, Some(&clip)), Unavailable);
    assert_eq!(motion_state(&down, Some(&clip)), Unavailable);
}

#[test]
fn the_focal_point_decides_fills_except_custom_crops_with_their_own_focus() {
    let fill = |focus| {
        let mut s = CropSpec::new("x", 100, 100, Mode::Fill);
        s.focus = focus;
        s
    };
    use SpecSource::*;
    let cases = [
        (fill(None), Preset, true),
        (fill(Some(Focus::Left)), Preset, true),
        (fill(Some(Focus::Smart)), AlbumRule, true),
        (fill(None), Custom, true),
        (fill(Some(Focus::Center)), Custom, false),
        (CropSpec::new("f", 100, 100, Mode::Fit), Preset, false),
        (CropSpec::new("p", 100, 100, Mode::Pad), Custom, false),
    ];
    let point = Point { x: 0.25, y: 1.0 };
    for (spec, source, takes) in cases {
        assert_eq!(takes_point(&spec, source), takes, "{spec:?} {source:?}");
        let got = aimed(spec.clone(), source, Some(point)).at;
        assert_eq!(got, takes.then_some(At { x: 2500, y: 10_000 }));
        assert_eq!(aimed(spec, source, None).at, None);
    }
    assert!(check_point(Some(point)).is_ok() && check_point(None).is_ok());
    for bad in [(-0.1, 0.5), (0.5, 1.01), (f64::NAN, 0.5)] {
        assert!(check_point(Some(Point { x: bad.0, y: bad.1 })).is_err());
    }
    let read = |v: serde_json::Value| serde_json::from_value::<Point>(v).ok();
    assert_eq!(read(serde_json::json!({"x": 0.25, "y": 1})), Some(point));
    assert_eq!(read(serde_json::json!([0.25, 1.0])), None);
    assert_eq!(read(serde_json::json!({"x": 0.25, "y": 1, "z": 0})), None);
    // A spec without focus stores as before; `at` is never stored.
    let mut s = fill(None);
    s.at = Some(point.at());
    assert!(!s.to_json().contains("focus") && !s.to_json().contains("\"at\""));
    s.focus = Some(Focus::Smart);
    assert!(s.to_json().contains("\"focus\":\"smart\""));
    assert_eq!(Format::parse("avif").map(Format::mime), Some("image/avif"));
}

#[test]
fn smart_covers_hold_the_focal_point_else_the_salient_one() {
    let at = |x, y| Some(Point { x, y });
    let d = |focus, salient| Details {
        focus,
        salient,
        ..Details::default()
    };
    assert_eq!(d(None, None).cover_tenths(), None);
    assert_eq!(d(None, at(0.84, 0.26)).cover_tenths(), Some((8, 3)));
    assert_eq!(
        d(at(0.0, 1.0), at(0.84, 0.26)).cover_tenths(),
        Some((0, 10))
    );
}

#[test]
fn crop_specs_validate_and_combine() {
    let spec = |w, h| CropSpec::new("x", w, h, Mode::Fill);
    assert!(spec(400, 0).validate().is_ok());
    assert!(spec(0, 0).validate().is_err());
    assert!(spec(15001, 1).validate().is_err());
    let mut s = spec(1, 1);
    s.quality = 0;
    assert!(s.validate().is_err());
    for ok in ["a", "a-b", "0", &"a".repeat(32)] {
        assert!(super::crop::valid_code(ok), "{ok}");
    }
    for bad in ["", "-a", "A", "a_b", "a.b", &"a".repeat(33)] {
        assert!(!super::crop::valid_code(bad), "{bad}");
    }
    // A folder rule with a preset's code replaces it; custom crops follow.
    let presets = super::crop::default_presets();
    let rule = CropSpec::new("thumb", 100, 100, Mode::Fill);
    let custom = CropSpec::new("face", 50, 50, Mode::Fill);
    let got = desired(presets, vec![rule.clone()], vec![custom.clone()]);
    assert_eq!(got.len(), 5);
    assert_eq!(got[0], (rule, SpecSource::AlbumRule));
    assert_eq!(got[4], (custom, SpecSource::Custom));
    // The stored JSON keeps today's wire names.
    let json = CropSpec::new("t", 1, 2, Mode::Pad).to_json();
    assert!(json.contains("\"mode\":\"pad\"") && json.contains("\"format\":\"webp\""));
}

#[test]
fn scopes_are_canonical() {
    let v = |s: &[&str]| Some(s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    assert_eq!(
        normalize_scopes(None),
        Some(vec![Scope::Read, Scope::Write])
    );
    assert_eq!(
        normalize_scopes(v(&["write", "read", "write"])),
        Some(vec![Scope::Read, Scope::Write])
    );
    assert_eq!(normalize_scopes(v(&["read"])), Some(vec![Scope::Read]));
    assert_eq!(normalize_scopes(v(&[])), None);
    assert_eq!(normalize_scopes(v(&["admin"])), None);
}

#[test]
fn wire_names_deserialise_and_a_wrong_one_lists_the_choices() {
    let read = |v: serde_json::Value| serde_json::from_value::<PublishMode>(v);
    assert_eq!(
        read(serde_json::json!("unlisted")).unwrap(),
        PublishMode::Unlisted
    );
    let wrong = read(serde_json::json!("secret")).unwrap_err().to_string();
    assert_eq!(wrong, "must be private, unlisted or public");
    let number = read(serde_json::json!(3)).unwrap_err().to_string();
    assert!(
        number.ends_with("expected one of private, unlisted or public"),
        "{number}"
    );
    assert_eq!(Visibility::refusal(), "must be public or private");
    assert_eq!(TokenChoice::refusal(), "must be new or keep");
    match PublishMode::from_param("mode", "secret") {
        Err(Error::Validation(e)) => {
            assert_eq!(
                (e[0].field.as_str(), e[0].message.as_str()),
                ("mode", "must be private, unlisted or public")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn ids_read_uuids_and_refuse_the_rest() {
    use super::id::{AnyId, Id};
    let id = serde_json::json!(U.to_string());
    assert_eq!(serde_json::from_value::<Id>(id.clone()).unwrap(), Id(U));
    let bad = serde_json::from_value::<Id>(serde_json::json!("nope")).unwrap_err();
    assert_eq!(bad.to_string(), "must be a UUID");
    let number = serde_json::from_value::<Id>(serde_json::json!(42)).unwrap_err();
    assert_eq!(
        number.to_string(),
        "invalid type: integer `42`, expected a string"
    );
    assert_eq!(serde_json::from_value::<AnyId>(id).unwrap(), AnyId(Some(U)));
    assert_eq!(
        serde_json::from_value::<AnyId>(serde_json::json!("nope")).unwrap(),
        AnyId(None)
    );
}
