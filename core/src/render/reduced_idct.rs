//! jpeg-decoder's reduced IDCTs (0.3, MIT: `dequantize_and_idct_block_4x4`
//! and its 2x2 and 1x1 siblings), as libjpeg IDCT functions, for
//! `progressive` to put in place of libjpeg's box-filtering ones: each
//! block rebuilt from its lowest 4x4, 2x2 or 1x1 frequencies.

use mozjpeg_sys::{jpeg_component_info, jpeg_decompress_struct, JCOEF, JDIMENSION};
use std::num::Wrapping;

/// jpeg-decoder's `stbi_f2f` of 0.541196100, -1.847759065 and
/// 0.765366865: the constants in 12-bit fixed point.
const F_0_541: Wrapping<i32> = Wrapping(2217);
const F_1_847: Wrapping<i32> = Wrapping(-7567);
const F_0_765: Wrapping<i32> = Wrapping(3135);

fn clamp(x: Wrapping<i32>) -> u8 {
    x.0.clamp(0, 255) as u8
}

/// The block's coefficients, dequantized (libjpeg keeps both in natural
/// order), for `n` x `n` of the lowest frequencies.
///
/// # Safety
/// libjpeg's arguments to an IDCT function.
unsafe fn dequantized<const N: usize>(
    comp: *mut jpeg_component_info,
    coef: *mut JCOEF,
) -> [[Wrapping<i32>; N]; N] {
    // SAFETY: libjpeg passes a 64-coefficient block and the component
    // whose quantization table was saved when its first scan began.
    let (coef, quant) = unsafe {
        (
            std::slice::from_raw_parts(coef, 64),
            &(*(*comp).quant_table).quantval,
        )
    };
    let mut s = [[Wrapping(0); N]; N];
    for (v, row) in s.iter_mut().enumerate() {
        for (u, x) in row.iter_mut().enumerate() {
            *x = Wrapping(coef[v * 8 + u] as i32 * quant[v * 8 + u] as i32);
        }
    }
    s
}

/// Writes `rows` to libjpeg's output rows at `col`.
///
/// # Safety
/// libjpeg's output arguments to an IDCT function of that size.
unsafe fn put<const N: usize>(out: *mut *mut u8, col: JDIMENSION, rows: [[u8; N]; N]) {
    for (i, row) in rows.iter().enumerate() {
        // SAFETY: libjpeg's output buffer has `N` rows with `N` samples
        // from `col`.
        unsafe {
            let dst = (*out.add(i)).add(col as usize);
            std::ptr::copy_nonoverlapping(row.as_ptr(), dst, N);
        }
    }
}

/// jpeg-decoder's `dequantize_and_idct_block_4x4`: each block's 4x4
/// lowest frequencies to 4x4 samples.
pub(super) unsafe extern "C-unwind" fn idct_4x4(
    _cinfo: *mut jpeg_decompress_struct,
    comp: *mut jpeg_component_info,
    coef: *mut JCOEF,
    out: *mut *mut u8,
    col: JDIMENSION,
) {
    const CONST_BITS: usize = 12;
    const PASS1_BITS: usize = 2;
    const FINAL_BITS: usize = CONST_BITS + PASS1_BITS + 3;
    // SAFETY: called by libjpeg as an IDCT function.
    let s = unsafe { dequantized::<4>(comp, coef) };
    let mut temp = [[Wrapping(0i32); 4]; 4];
    for i in 0..4 {
        let (s0, s1, s2, s3) = (s[0][i], s[1][i], s[2][i], s[3][i]);
        let x0 = (s0 + s2) << PASS1_BITS;
        let x2 = (s0 - s2) << PASS1_BITS;
        let p1 = (s1 + s3) * F_0_541;
        let t0 = (p1 + s3 * F_1_847 + Wrapping(512)) >> (CONST_BITS - PASS1_BITS);
        let t2 = (p1 + s1 * F_0_765 + Wrapping(512)) >> (CONST_BITS - PASS1_BITS);
        temp[0][i] = x0 + t2;
        temp[3][i] = x0 - t2;
        temp[1][i] = x2 + t0;
        temp[2][i] = x2 - t0;
    }
    let mut rows = [[0u8; 4]; 4];
    for (t, row) in temp.iter().zip(rows.iter_mut()) {
        let x0 = (t[0] + t[2]) << CONST_BITS;
        let x2 = (t[0] - t[2]) << CONST_BITS;
        let p1 = (t[1] + t[3]) * F_0_541;
        let t0 = p1 + t[3] * F_1_847;
        let t2 = p1 + t[1] * F_0_765;
        let bias = Wrapping(1 << (FINAL_BITS - 1)) + Wrapping(128 << FINAL_BITS);
        let (x0, x2) = (x0 + bias, x2 + bias);
        *row = [
            clamp((x0 + t2) >> FINAL_BITS),
            clamp((x2 + t0) >> FINAL_BITS),
            clamp((x2 - t0) >> FINAL_BITS),
            clamp((x0 - t2) >> FINAL_BITS),
        ];
    }
    // SAFETY: libjpeg's output arguments for a 4x4 IDCT.
    unsafe { put(out, col, rows) }
}

/// jpeg-decoder's `dequantize_and_idct_block_2x2`.
pub(super) unsafe extern "C-unwind" fn idct_2x2(
    _cinfo: *mut jpeg_decompress_struct,
    comp: *mut jpeg_component_info,
    coef: *mut JCOEF,
    out: *mut *mut u8,
    col: JDIMENSION,
) {
    const SCALE_BITS: usize = 3;
    // SAFETY: called by libjpeg as an IDCT function.
    let s = unsafe { dequantized::<2>(comp, coef) };
    let bias = Wrapping(1 << (SCALE_BITS - 1)) + Wrapping(128 << SCALE_BITS);
    let (x0, x2) = (s[0][0] + s[1][0] + bias, s[0][0] - s[1][0] + bias);
    let (x1, x3) = (s[0][1] + s[1][1], s[0][1] - s[1][1]);
    let rows = [
        [
            clamp((x0 + x1) >> SCALE_BITS),
            clamp((x0 - x1) >> SCALE_BITS),
        ],
        [
            clamp((x2 + x3) >> SCALE_BITS),
            clamp((x2 - x3) >> SCALE_BITS),
        ],
    ];
    // SAFETY: libjpeg's output arguments for a 2x2 IDCT.
    unsafe { put(out, col, rows) }
}

/// jpeg-decoder's `dequantize_and_idct_block_1x1`: the block's mean.
pub(super) unsafe extern "C-unwind" fn idct_1x1(
    _cinfo: *mut jpeg_decompress_struct,
    comp: *mut jpeg_component_info,
    coef: *mut JCOEF,
    out: *mut *mut u8,
    col: JDIMENSION,
) {
    // SAFETY: called by libjpeg as an IDCT function.
    let s = unsafe { dequantized::<1>(comp, coef) };
    let mean = (s[0][0] + Wrapping(128 * 8)) / Wrapping(8);
    // SAFETY: libjpeg's output arguments for a 1x1 IDCT.
    unsafe { put(out, col, [[clamp(mean)]]) }
}
