//! What libjpeg walked before it declined a file, weighed against a
//! second decode by jpeg-decoder (`shrink`, `Declined`).

use super::super::jpeg_markers;
use super::super::pixels::RenderError;
use super::super::shrink::decode_jpeg;
use super::super::shrink::tests::only;
use super::tests::progressive;
use super::*;

/// Where each scan of `whole` starts, and where its first scan ends.
fn scans(whole: &[u8]) -> (Vec<usize>, usize) {
    let sos: Vec<usize> = (0..whole.len() - 1)
        .filter(|i| whole[*i..].starts_with(&[0xFF, 0xDA]))
        .collect();
    let first_end = (sos[0] + 2..whole.len() - 1)
        .find(|i| whole[*i] == 0xFF && !matches!(whole[i + 1], 0x00 | 0xD0..=0xD7))
        .expect("a marker after the first scan");
    (sos, first_end)
}

/// `whole` (a progressive file) with its last scan `again` times more.
fn last_scan_again(whole: &[u8], again: usize) -> Vec<u8> {
    let (sos, _) = scans(whole);
    let eoi = whole.len() - 2;
    [
        &whole[..eoi],
        &whole[sos[sos.len() - 1]..eoi].repeat(again),
        &whole[eoi..],
    ]
    .concat()
}

/// `whole` with a DC table of a symbol over 15 and its first (DC) scan
/// once more, put before its scan `at`, or last: libjpeg refuses the
/// table only when that scan begins, after those before it (a review's
/// file; jpeg-decoder takes such a table).
fn bad_table_before(whole: &[u8], at: Option<usize>) -> Vec<u8> {
    let (sos, first_end) = scans(whole);
    let at = at.map_or(whole.len() - 2, |i| sos[i]);
    let mut dht = vec![0xFF, 0xC4, 0, 2 + 1 + 16 + 1, 0x00, 1];
    dht.extend([0; 15]);
    dht.push(16);
    [&whole[..at], &dht, &whole[sos[0]..first_end], &whole[at..]].concat()
}

#[test]
fn a_second_decode_is_allowed_only_while_both_walks_stay_within_the_limit() {
    let spec = only("s", 16, 0);
    let refused = |bytes: &[u8]| match decode_jpeg(bytes, &spec) {
        Err(RenderError::Decode(m)) => m.contains("again would pass the limit"),
        _ => false,
    };
    // Handed to jpeg-decoder: its outcome, whatever it is.
    let fell_back = |bytes: &[u8]| {
        let mut d = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
        let theirs = d.read_info().and_then(|_| {
            d.scale(32, 24)?;
            d.decode()
        });
        match (decode_jpeg(bytes, &spec), theirs) {
            (Ok(Some(_)), Ok(_)) => true,
            (Err(RenderError::Decode(ours)), Err(theirs)) => ours == theirs.to_string(),
            _ => false,
        }
    };
    let spent = |bytes: &[u8]| match decode(bytes, 2, &jpeg_markers::read(bytes).unwrap()) {
        Err(Declined { spent_scans }) => spent_scans,
        Ok(_) => 0,
    };
    // 64x48 may have 100 scans. Refused when its last scan begins: all
    // walked, as many again by jpeg-decoder.
    let whole = progressive(64, 48, 3, true);
    let n = jpeg_markers::read(&whole).unwrap().scans as usize;
    let few = bad_table_before(&whole, None);
    assert_eq!(spent(&few) as usize, n + 1);
    assert!(fell_back(&few));
    // 51 and 51.
    let many = bad_table_before(&last_scan_again(&whole, 50 - n), None);
    assert_eq!(
        (spent(&many), jpeg_markers::read(&many).unwrap().scans),
        (51, 51)
    );
    assert!(refused(&many));
    // The same table before the second scan: 2 walked, then 51.
    let early = bad_table_before(&last_scan_again(&whole, 50 - n), Some(1));
    assert_eq!(spent(&early), 2);
    assert!(fell_back(&early));
    // Refused at scan 5, so its 5 and jpeg-decoder's all: 100 are
    // within the limit, 101 are not.
    let at_five = |scans: usize| bad_table_before(&last_scan_again(&whole, scans - 1 - n), Some(4));
    let (within, past) = (at_five(95), at_five(96));
    assert_eq!((spent(&within), spent(&past)), (5, 5));
    assert!(fell_back(&within));
    assert!(refused(&past));
    // Declined after every scan was walked (a component no scan covers):
    // 52 and 52.
    let uncovered = include_bytes!("testdata/progressive_luma_only.jpg");
    let uncovered = last_scan_again(
        uncovered,
        52 - jpeg_markers::read(uncovered).unwrap().scans as usize,
    );
    assert_eq!(spent(&uncovered), 52);
    assert!(refused(&uncovered));
}
