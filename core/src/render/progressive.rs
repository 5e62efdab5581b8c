//! Progressive JPEGs shrunk on load by libjpeg (mozjpeg's libjpeg-turbo,
//! built from the crate's bundled sources), with jpeg-decoder's reduced
//! IDCT in place of libjpeg's own.
//!
//! A progressive file is mostly entropy-coded refinement scans, and
//! libjpeg decodes those about a fifth faster than jpeg-decoder (0.46 s
//! against 0.58-0.73 s for the corpus's 18 MP photo). But libjpeg's
//! reduced IDCTs (`jidctred.c`) average pairs of full-size pixels, a box
//! filter that aliases fine detail (0.57 dB worse after webp q80 on that
//! photo), where jpeg-decoder's reconstructs each block from its lowest
//! frequencies. So libjpeg does the entropy decoding, upsampling and colour
//! conversion, and `reduced_idct`'s functions, ported from jpeg-decoder,
//! do the reduced IDCTs. Where all components have the same
//! sampling, the result is within 3 levels of jpeg-decoder's (colour
//! rounding). At 1/2, libjpeg gives 4:2:0 chroma its accurate 8x8 IDCT at
//! the output's resolution instead of a reduced one and upsampling (closer
//! to the full decode than jpeg-decoder's); at 1/8 it upsamples 4:2:2 and
//! 4:4:0 chroma without smoothing (1.5 dB further off than jpeg-decoder's
//! on a review's files; default presets reach 1/8 only past 32,768 px).
//!
//! libjpeg does not let an application choose its IDCT, so `use_idct`
//! replaces the reduced IDCT functions in libjpeg's IDCT module after
//! `jpeg_start_decompress` has chosen them and before any block is
//! transformed. That module's place in `jpeg_decompress_struct` (its
//! fourth-last field) is fixed by the exact mozjpeg-sys version in
//! Cargo.toml; the swap only happens where libjpeg's own functions are
//! found there, and the tests fail if ours are not the ones used.
//!
//! Anything unusual in a file's header is `Declined`, and the caller
//! decodes with jpeg-decoder as before: a colour space jpeg-decoder would
//! not read as YCbCr or grey (`jpeg_markers::Markers::colour`: libjpeg
//! weighs component ids, JFIF and Adobe markers in another order, and its
//! reading is overruled by jpeg-decoder's), a component no scan covers (it
//! has no quantization table), and anything libjpeg refuses or warns about
//! before it starts decoding. Corrupt data met while decoding (a cut scan,
//! a bad code, bytes between segments) is read past as libjpeg does, as
//! libvips shows such files, and not decoded a second time: a warning in
//! the last scan would otherwise cost the whole decode twice. What libjpeg
//! walked before it declined (an error in a late scan's table, a check
//! after its decode) is counted in `Declined`, and `shrink` lets
//! jpeg-decoder decode the file only while both walks together stay
//! within the scan limit.

use super::jpeg_markers::{Colour, Markers};
use super::reduced_idct::{idct_1x1, idct_2x2, idct_4x4};
use mozjpeg_sys::*;
use std::ffi::c_void;
use std::mem::size_of;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Decoded pixels: `channels` (1 or 3) interleaved, `width` x `height`.
pub struct Shrunk {
    pub pixels: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub channels: u32,
}

/// What libjpeg's error exit unwinds with; any other panic is a bug.
struct Refused;

/// libjpeg did not decode the file (see the module's doc), after walking
/// `spent_scans` of its scans: 0 when it stopped in the header, all of
/// them when a check after `jpeg_start_decompress` failed. The caller
/// weighs a second decode by jpeg-decoder against that.
#[derive(Debug, PartialEq, Eq)]
pub struct Declined {
    pub spent_scans: u32,
}

/// `bytes` decoded at 1/`denom` (2, 4 or 8), or why not.
pub fn decode(bytes: &[u8], denom: u32, markers: &Markers) -> Result<Shrunk, Declined> {
    if ![2, 4, 8].contains(&denom) || bytes.is_empty() {
        return Err(Declined { spent_scans: 0 });
    }
    // Creating one fails only on a version mismatch or out of memory.
    let mut session = catch_unwind(Session::new).map_err(|_| Declined { spent_scans: 0 })?;
    // libjpeg leaves by unwinding from `error_exit` (a corrupt file); the
    // session outlives the unwind, so what it had walked can be read.
    let decoded = catch_unwind(AssertUnwindSafe(|| session.decode(bytes, denom, markers)))
        .unwrap_or_else(|panic| {
            if !panic.is::<Refused>() {
                tracing::error!("the libjpeg decode panicked; jpeg-decoder takes the file");
            }
            None
        });
    decoded.ok_or_else(|| Declined {
        spent_scans: session.spent_scans(),
    })
}

/// libjpeg's reduced IDCT entry: one block's coefficients to `size` rows
/// of `size` samples at `output_buf[row][col..]`.
type Idct = unsafe extern "C-unwind" fn(
    *mut jpeg_decompress_struct,
    *mut jpeg_component_info,
    *mut JCOEF,
    *mut *mut u8,
    JDIMENSION,
);

/// One decompression, destroyed on drop. Both structs stay where they
/// were created: libjpeg keeps a pointer to the error manager.
struct Session {
    cinfo: Box<jpeg_decompress_struct>,
    err: *mut jpeg_error_mgr,
}

/// jpegint.h's `DSTATE_READY`: the header is read, no data decoded yet.
const HEADER_READ: i32 = 202;

unsafe extern "C-unwind" fn error_exit(_cinfo: &mut jpeg_common_struct) {
    resume_unwind(Box::new(Refused));
}

/// A warning about the header ends the decode, as an error does, while
/// leaving the file to jpeg-decoder costs nothing; one about the data
/// (corrupt data libjpeg reads past) is let be.
unsafe extern "C-unwind" fn emit_message(cinfo: &mut jpeg_common_struct, level: i32) {
    if level < 0 && cinfo.global_state <= HEADER_READ {
        resume_unwind(Box::new(Refused));
    }
}

impl Session {
    fn new() -> Session {
        // SAFETY: zeroed structs are what libjpeg's C callers start from;
        // `jpeg_std_error` and `jpeg_create_decompress` fill them in. The
        // error manager is freed in `drop`, after libjpeg's last use.
        unsafe {
            let err = Box::into_raw(Box::new(std::mem::zeroed::<jpeg_error_mgr>()));
            let mut cinfo: Box<jpeg_decompress_struct> = Box::new(std::mem::zeroed());
            cinfo.common.err = jpeg_std_error(&mut *err);
            (*err).error_exit = Some(error_exit);
            (*err).emit_message = Some(emit_message);
            jpeg_create_decompress(&mut *cinfo);
            Session { cinfo, err }
        }
    }

    /// Scans libjpeg has begun: none while it read the header only.
    fn spent_scans(&self) -> u32 {
        if self.cinfo.common.global_state > HEADER_READ {
            self.cinfo.input_scan_number.max(0) as u32
        } else {
            0
        }
    }

    fn decode(&mut self, bytes: &[u8], denom: u32, markers: &Markers) -> Option<Shrunk> {
        let cinfo = &mut *self.cinfo;
        // SAFETY: libjpeg's documented calling sequence on a created
        // session whose source outlives it; errors unwind out of `decode`.
        unsafe {
            jpeg_mem_src(cinfo, bytes.as_ptr(), bytes.len() as _);
            if jpeg_read_header(cinfo, 1) != 1 {
                return None;
            }
            let components = usize::try_from(cinfo.num_components).ok()?;
            // SAFETY: a read header has `num_components` entries.
            let ids: Vec<i32> = std::slice::from_raw_parts(cinfo.comp_info, components)
                .iter()
                .map(|c| c.component_id)
                .collect();
            let channels = match markers.colour(&ids)? {
                Colour::YCbCr => {
                    cinfo.jpeg_color_space = J_COLOR_SPACE::JCS_YCbCr;
                    cinfo.out_color_space = J_COLOR_SPACE::JCS_RGB;
                    3
                }
                Colour::Grey => 1,
            };
            cinfo.scale_num = 1;
            cinfo.scale_denom = denom;
            // Smoothing only guesses coefficients a cut-short file lacks.
            cinfo.do_block_smoothing = 0;
            jpeg_start_decompress(cinfo);
            let (width, height) = (cinfo.output_width, cinfo.output_height);
            if width != cinfo.image_width.div_ceil(denom)
                || height != cinfo.image_height.div_ceil(denom)
                || cinfo.output_components != channels
            {
                return None;
            }
            use_idct(cinfo)?;
            let stride = width as usize * channels as usize;
            let mut pixels = vec![0u8; stride * height as usize];
            while cinfo.output_scanline < height {
                let mut row = pixels
                    .as_mut_ptr()
                    .add(stride * cinfo.output_scanline as usize);
                if jpeg_read_scanlines(cinfo, &mut row, 1) != 1 {
                    return None;
                }
            }
            jpeg_finish_decompress(cinfo);
            Some(Shrunk {
                pixels,
                width,
                height,
                channels: channels as u32,
            })
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: created in `new`; destroying frees libjpeg's pools, and
        // libjpeg is done with the error manager after it.
        unsafe {
            jpeg_destroy_decompress(&mut self.cinfo);
            drop(Box::from_raw(self.err));
        }
    }
}

/// libjpeg's IDCT module: `start_pass`, then one function per component
/// (jpegint.h's `struct jpeg_inverse_dct`, `MAX_COMPONENTS` = 10).
#[repr(C)]
struct InverseDct {
    start_pass: *mut c_void,
    inverse_dct: [Option<Idct>; 10],
}

// libjpeg's reduced IDCTs (jidctred.c), named only to be recognised.
extern "C-unwind" {
    fn jpeg_idct_4x4(
        cinfo: *mut jpeg_decompress_struct,
        comp: *mut jpeg_component_info,
        coef: *mut JCOEF,
        out: *mut *mut u8,
        col: JDIMENSION,
    );
    fn jpeg_idct_2x2(
        cinfo: *mut jpeg_decompress_struct,
        comp: *mut jpeg_component_info,
        coef: *mut JCOEF,
        out: *mut *mut u8,
        col: JDIMENSION,
    );
    fn jpeg_idct_1x1(
        cinfo: *mut jpeg_decompress_struct,
        comp: *mut jpeg_component_info,
        coef: *mut JCOEF,
        out: *mut *mut u8,
        col: JDIMENSION,
    );
}

/// Puts ours in place of each of libjpeg's reduced IDCTs that
/// `jpeg_start_decompress` chose. A component it gives a full 8x8 IDCT
/// keeps it: libjpeg scales subsampled chroma up in the IDCT (its
/// accurate one) rather than upsampling it after. `None` when no function
/// was recognised, so a struct that is not laid out as this module
/// expects is never written to.
///
/// # Safety
/// `cinfo` has been through `jpeg_start_decompress` and no scanline has
/// been read yet.
unsafe fn use_idct(cinfo: &mut jpeg_decompress_struct) -> Option<()> {
    let ours: [(Idct, Idct); 3] = [
        (jpeg_idct_4x4, idct_4x4),
        (jpeg_idct_2x2, idct_2x2),
        (jpeg_idct_1x1, idct_1x1),
    ];
    // The private `idct` field: the fourth pointer from the end.
    let at = size_of::<jpeg_decompress_struct>() - 4 * size_of::<*mut c_void>();
    // SAFETY: the offset is inside the struct and pointer-aligned.
    let module = unsafe { *((cinfo as *mut _ as *mut u8).add(at) as *const *mut InverseDct) };
    let components = usize::try_from(cinfo.num_components).ok()?;
    // A component no scan covered has no quantization table (libjpeg
    // writes it grey); ours need one, so such a file is jpeg-decoder's.
    // SAFETY: `comp_info` has `num_components` entries.
    let comps = unsafe { std::slice::from_raw_parts(cinfo.comp_info, components) };
    if comps.iter().any(|c| c.quant_table.is_null()) {
        return None;
    }
    // SAFETY: a started decompression has its IDCT module, one function
    // per component.
    let slots = unsafe { module.as_mut()?.inverse_dct.get_mut(..components)? };
    let mut swapped = 0;
    for slot in slots.iter_mut() {
        let chosen = (*slot)? as usize;
        if let Some((_, mine)) = ours.iter().find(|(theirs, _)| *theirs as usize == chosen) {
            *slot = Some(*mine);
            swapped += 1;
        }
    }
    (swapped > 0).then_some(())
}

#[cfg(test)]
#[path = "progressive_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "progressive_limit_tests.rs"]
mod limit_tests;
