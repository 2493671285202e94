//! Colour thresholds on the bird's-eye view: HLS L for white lines, LAB B for yellow lines,
//! combined into one binary mask (0 or 255). By default each pixel is compared with the road
//! on both sides of it (local contrast); the reference's rule scales each channel by its
//! maximum over the view instead (`threshold.method`).

mod colour;
mod contrast;

pub use colour::{channels, prepare, prepare_small, Cue};
pub use contrast::context_px;

use colour::{b_index, b_lut, lightness, saturation};
use contrast::{keep_vertical_runs, LocalContrast};

use crate::base::config::{ThresholdConfig, ThresholdMethod};
use crate::base::error::Result;
use crate::base::frame::{BgrFrame, BinaryMask, GrayImage};
use crate::base::planes::RawFrame;
use crate::lane::warp::{BirdseyeRemap, ColumnBands};
use opencv::core::{self, Mat};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;

/// A threshold pass's mask as it was computed (`Thresholded::mask_as_computed`).
pub enum MaskRef<'a> {
    /// Over the whole view.
    View(&'a BinaryMask),
    /// Packed like the bands' L and B (see `ColumnBands`).
    Bands(&'a BinaryMask, &'a ColumnBands),
}

/// The channels and mask a threshold pass produces (channels after scaling, for display).
pub struct Thresholded {
    /// Union of the enabled thresholds, 0 or 255: over the whole view, or packed like `l` and
    /// `b` when `bands` is set (see `mask` and `mask_as_computed`).
    mask: BinaryMask,
    /// HLS L as computed (unscaled); packed as the band image when `bands` is set.
    pub l: GrayImage,
    /// LAB B as computed (unscaled); packed as the band image when `bands` is set.
    pub b: GrayImage,
    /// The bands `l` and `b` are packed from, when only bands were computed.
    pub bands: Option<ColumnBands>,
    /// Maximum of L over the image.
    pub l_max: u8,
    /// Maximum of B over the image.
    pub b_max: u8,
    /// Whether B was scaled (its maximum exceeded the gate).
    pub b_was_scaled: bool,
}

impl Thresholded {
    /// L scaled so its maximum is 255 (what the white threshold compares), over the whole
    /// view, for display.
    pub fn l_scaled(&self) -> Result<GrayImage> {
        let mut m = self.unpacked(self.l.mat())?;
        scale_to_max(m.data_bytes_mut()?, self.l_max);
        GrayImage::new(m)
    }
    /// B as the yellow threshold compares it (scaled only above the gate), over the whole
    /// view, for display.
    pub fn b_scaled(&self) -> Result<GrayImage> {
        let mut m = self.unpacked(self.b.mat())?;
        if self.b_was_scaled {
            scale_to_max(m.data_bytes_mut()?, self.b_max);
        }
        GrayImage::new(m)
    }
    /// The mask over the whole view (a copy, or the bands' mask unpacked, zero elsewhere).
    pub fn mask(&self) -> Result<BinaryMask> {
        BinaryMask::new(self.unpacked(self.mask.mat())?)
    }
    /// The mask as computed, without a copy: over the whole view, or packed with its bands.
    pub fn mask_as_computed(&self) -> MaskRef<'_> {
        match &self.bands {
            None => MaskRef::View(&self.mask),
            Some(b) => MaskRef::Bands(&self.mask, b),
        }
    }
    /// The mask over the whole view, consuming the result.
    pub fn into_mask(self) -> Result<BinaryMask> {
        match self.bands {
            None => Ok(self.mask),
            Some(_) => self.mask(),
        }
    }
    /// A channel over the whole view: a copy, or the band image unpacked (zero elsewhere).
    fn unpacked(&self, ch: &Mat) -> Result<Mat> {
        let Some(bands) = &self.bands else {
            return Ok(ch.try_clone()?);
        };
        let mut m = Mat::new_rows_cols_with_default(
            bands.height,
            bands.width,
            core::CV_8UC1,
            core::Scalar::all(0.0),
        )?;
        let src = ch.data_bytes()?;
        let d = m.data_bytes_mut()?;
        let (w, pw) = (bands.width as usize, bands.packed_width());
        // Every view row, from its own packed row or its stand-in's (`RowPlan`).
        for y in 0..bands.height.max(0) as usize {
            for k in 0..bands.bands {
                if let Some((r, rg, x)) = bands.run_on_view_row(y, k) {
                    let (v, p) = (y * w + x, r * pw + rg.start);
                    d[v..v + rg.len()].copy_from_slice(&src[p..p + rg.len()]);
                }
            }
        }
        Ok(m)
    }
}

/// The B a threshold reads: the yellow cue (red set neutral) for the local-contrast rule, the
/// exact LAB B for the reference's.
pub fn cue(cfg: &ThresholdConfig) -> Cue {
    match cfg.method {
        ThresholdMethod::LocalContrast => Cue::Yellow,
        ThresholdMethod::GlobalMax => Cue::ExactB,
    }
}

/// Threshold a bird's-eye BGR image into the lane-pixel mask.
///
/// Local contrast (default): see `ThresholdMethod::LocalContrast`; then only vertical runs of
/// `min_run_px` rows are kept. Global max (the reference's rule):
/// White: L scaled so that its maximum becomes 255, kept where `l_min < L <= l_max`.
/// Yellow: B scaled the same way only when its maximum is over `b_scale_gate`, kept where
/// `b_min < B <= b_max`. Optional Sobel-x on L and HLS S are added when enabled.
pub fn threshold(img: &BgrFrame, cfg: &ThresholdConfig) -> Result<Thresholded> {
    let (l, b) = channels(img, cue(cfg))?;
    threshold_channels(img, l, b, cfg)
}

fn scale_to_max(ch: &mut [u8], max: u8) {
    if max == 0 {
        return;
    }
    let mut lut = [0u8; 256];
    for (v, o) in lut.iter_mut().enumerate() {
        *o = ((v as f64) * 255.0 / max as f64).min(255.0) as u8;
    }
    for v in ch.iter_mut() {
        *v = lut[*v as usize];
    }
}

/// The white and yellow decisions per channel value (255 = kept) for channel maxima `lmax`
/// and `bmax`: the comparison is in integers, exactly as float scaling would be:
/// `v*255/max > t  <=>  v*255 > t*max`. The loop is then two loads and an or per pixel.
fn decision_tables(lmax: u32, bmax: u32, cfg: &ThresholdConfig) -> ([u8; 256], [u8; 256]) {
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (l_lo, l_hi) = (cfg.l_min as u32 * lmax, cfg.l_max as u32 * lmax);
    let (b_lo, b_hi) = if b_scaled {
        (cfg.b_min as u32 * bmax, cfg.b_max as u32 * bmax)
    } else {
        (cfg.b_min as u32 * 255, cfg.b_max as u32 * 255)
    };
    let mut white = [0u8; 256];
    let mut yellow = [0u8; 256];
    for v in 0..256u32 {
        let x = v * 255;
        white[v as usize] = if lmax > 0 && x > l_lo && x <= l_hi {
            255
        } else {
            0
        };
        yellow[v as usize] = if x > b_lo && x <= b_hi { 255 } else { 0 };
    }
    (white, yellow)
}

/// Threshold the bird's-eye view of `raw` on `bands` only: each band pixel comes straight from
/// `remap` (`BirdseyeRemap::visit_band_runs`, the pixel OpenCV's remap gives) and goes into L
/// and B at once, so the band view itself is never written. L and B are normalised by their
/// maxima over the bands; the mask, L and B come back packed (`MaskRef::Bands`). Two
/// passes on one thread (the bands are small; waking a second thread costs more than it saves
/// while the decoder is busy). The Sobel option needs whole rows and is not available here (the
/// pipeline uses the whole view when it is on).
pub fn threshold_bands(
    raw: RawFrame,
    remap: &BirdseyeRemap,
    bands: ColumnBands,
    cfg: &ThresholdConfig,
) -> Result<Thresholded> {
    let (rows, pw) = (bands.rows(), bands.packed_width());
    let lut = b_lut(cue(cfg))?;
    // SAFETY: `new_rows_cols` leaves the bytes uninitialised; pass 1 (L, B) and pass 2 (the
    // mask) write every one of them (the spans and the gaps cover the packed image exactly)
    // before anything reads them.
    let uninit = |rows: usize, cols: usize| unsafe {
        Mat::new_rows_cols(rows as i32, cols as i32, core::CV_8UC1)
    };
    let (mut lm, mut bm, mut mask) = (uninit(rows, pw)?, uninit(rows, pw)?, uninit(rows, pw)?);
    // HLS S of the band pixels, only when the S threshold is on.
    let mut sat = if cfg.s_enabled {
        vec![0u8; rows * pw]
    } else {
        Vec::new()
    };
    let (mut lmax, mut bmax) = (0u8, 0u8);
    {
        // Pass 1: L and B of the band pixels, and their maxima; zeros in the gaps of all three.
        let ld = lm.data_bytes_mut()?;
        let bd = bm.data_bytes_mut()?;
        let md = mask.data_bytes_mut()?;
        for g in bands.gaps() {
            ld[g.clone()].fill(0);
            bd[g.clone()].fill(0);
            md[g].fill(0);
        }
        // Per run: L and the table places first, then the lookups in a loop of their own, so
        // that many of their cache misses on the 16 MiB table are in flight at once. The maxima
        // are kept in locals within a run: as captured variables they would be loaded and
        // stored on every pixel, which chains each lookup to the previous one.
        let mut idx = vec![0u32; bands.cols];
        remap.visit_band_runs(raw, &bands, |a, run| {
            let n = run.len();
            let (mut lm, mut bm) = (lmax, bmax);
            for ((px, lo), ix) in run.iter().zip(ld[a..a + n].iter_mut()).zip(idx.iter_mut()) {
                let l = lightness(px[0], px[1], px[2]);
                lm = lm.max(l);
                *lo = l;
                *ix = b_index(px[0], px[1], px[2]) as u32;
            }
            for (bo, ix) in bd[a..a + n].iter_mut().zip(idx.iter()) {
                let b = lut.at(*ix as usize);
                bm = bm.max(b);
                *bo = b;
            }
            (lmax, bmax) = (lm, bm);
            if cfg.s_enabled {
                for (so, px) in sat[a..a + n].iter_mut().zip(run.iter()) {
                    *so = saturation(px[0], px[1], px[2]);
                }
            }
        })?;
    }
    let (lmax, bmax) = (lmax as u32, bmax as u32);
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (white, yellow) = decision_tables(lmax, bmax, cfg);
    let local = LocalContrast::new(cfg);
    let (mut pl, mut pb) = (Vec::new(), Vec::new());
    {
        // Pass 2: the decisions, packed like L and B (the gaps were zeroed in pass 1).
        let md = mask.data_bytes_mut()?;
        let ld = lm.data_bytes()?;
        let bd = bm.data_bytes()?;
        for sp in bands.spans() {
            let (a, n) = (sp.packed, sp.len);
            match cfg.method {
                ThresholdMethod::LocalContrast => local.row(
                    &ld[a..a + n],
                    &bd[a..a + n],
                    &mut md[a..a + n],
                    &mut pl,
                    &mut pb,
                ),
                ThresholdMethod::GlobalMax => {
                    for ((m, l), b) in md[a..a + n]
                        .iter_mut()
                        .zip(ld[a..a + n].iter())
                        .zip(bd[a..a + n].iter())
                    {
                        *m = white[*l as usize] | yellow[*b as usize];
                    }
                }
            }
            if cfg.s_enabled {
                for (m, s) in md[a..a + n].iter_mut().zip(sat[a..a + n].iter()) {
                    if *s > cfg.s_min && *s <= cfg.s_max {
                        *m = 255;
                    }
                }
            }
        }
    }
    Ok(Thresholded {
        mask: BinaryMask::new(mask)?,
        l: GrayImage::new(lm)?,
        b: GrayImage::new(bm)?,
        bands: Some(bands),
        l_max: lmax as u8,
        b_max: bmax as u8,
        b_was_scaled: b_scaled,
    })
}

/// Threshold from precomputed raw L and B channels (consumed and returned scaled).
pub fn threshold_channels(
    img: &BgrFrame,
    l: GrayImage,
    b: GrayImage,
    cfg: &ThresholdConfig,
) -> Result<Thresholded> {
    let (w, h) = (l.width(), l.height());
    let lm = l.into_mat();
    let bm = b.into_mat();
    let lmax = lm.data_bytes()?.iter().copied().max().unwrap_or(0) as u32;
    let bmax = bm.data_bytes()?.iter().copied().max().unwrap_or(0) as u32;
    let b_scaled = bmax > cfg.b_scale_gate as u32;
    let (white, yellow) = decision_tables(lmax, bmax, cfg);
    let mut mask = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, core::Scalar::all(0.0))?;
    {
        let md = mask.data_bytes_mut()?;
        let ld = lm.data_bytes()?;
        let bd = bm.data_bytes()?;
        match cfg.method {
            ThresholdMethod::LocalContrast => {
                let local = LocalContrast::new(cfg);
                let w = (w.max(1)) as usize;
                // Rows are independent: in parallel, each with its own scratch sums.
                md.par_chunks_mut(w)
                    .zip(ld.par_chunks(w).zip(bd.par_chunks(w)))
                    .for_each_init(
                        || (Vec::new(), Vec::new()),
                        |(pl, pb), (m, (l, b))| local.row(l, b, m, pl, pb),
                    );
            }
            ThresholdMethod::GlobalMax => {
                for ((m, l), b) in md.iter_mut().zip(ld.iter()).zip(bd.iter()) {
                    *m = white[*l as usize] | yellow[*b as usize];
                }
            }
        }
    }
    if cfg.method == ThresholdMethod::LocalContrast {
        let k = cfg.min_run_px;
        mask = keep_vertical_runs(mask, k)?;
    }
    if cfg.s_enabled {
        let src = img.bytes()?;
        let md = mask.data_bytes_mut()?;
        for (i, px) in src.chunks_exact(3).enumerate() {
            let s = saturation(px[0], px[1], px[2]);
            if s > cfg.s_min && s <= cfg.s_max {
                md[i] = 255;
            }
        }
    }
    if cfg.sobel_enabled {
        let mut sx = Mat::default();
        imgproc::sobel_def(&lm, &mut sx, core::CV_64F, 1, 0)?;
        let mut abs = Mat::default();
        core::absdiff(&sx, &core::Scalar::all(0.0), &mut abs)?;
        let mut mx = 0.0;
        core::min_max_loc(&abs, None, Some(&mut mx), None, None, &core::no_array())?;
        if mx > 0.0 {
            let md = mask.data_bytes_mut()?;
            let ad: &[f64] = abs.data_typed()?;
            for i in 0..md.len() {
                let v = (ad[i] * 255.0 / mx) as u32;
                if v > cfg.sobel_min as u32 && v <= cfg.sobel_max as u32 {
                    md[i] = 255;
                }
            }
        }
    }
    Ok(Thresholded {
        mask: BinaryMask::new(mask)?,
        l: GrayImage::new(lm)?,
        b: GrayImage::new(bm)?,
        bands: None,
        l_max: lmax as u8,
        b_max: bmax as u8,
        b_was_scaled: b_scaled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(bgr: [u8; 3], w: i32, h: i32) -> BgrFrame {
        let m = Mat::new_rows_cols_with_default(
            h,
            w,
            core::CV_8UC3,
            core::Scalar::new(bgr[0] as f64, bgr[1] as f64, bgr[2] as f64, 0.0),
        )
        .unwrap();
        BgrFrame::new(m).unwrap()
    }

    /// A `w` x `h` image whose pixels step through many colours.
    fn many_colours(w: i32, h: i32) -> BgrFrame {
        let mut m = solid([0, 0, 0], w, h);
        let d = m.mat_mut().data_bytes_mut().unwrap();
        for (i, px) in d.chunks_exact_mut(3).enumerate() {
            px[0] = (i * 7 % 256) as u8;
            px[1] = (i * 13 / 3 % 256) as u8;
            px[2] = (i * 29 / 5 % 256) as u8;
        }
        m
    }

    #[test]
    fn lightness_matches_opencv_hls() {
        let img = many_colours(256, 3);
        let mut hls = Mat::default();
        imgproc::cvt_color_def(img.mat(), &mut hls, imgproc::COLOR_BGR2HLS).unwrap();
        let (l, _) = channels(&img, Cue::ExactB).unwrap();
        let hd = hls.data_bytes().unwrap();
        for (i, v) in l.bytes().unwrap().iter().enumerate() {
            assert!(
                (*v as i32 - hd[i * 3 + 1] as i32).abs() <= 1,
                "pixel {i}: {v} vs {}",
                hd[i * 3 + 1]
            );
        }
    }

    #[test]
    fn b_channel_equals_opencv_lab() {
        let mut img = solid([0, 0, 0], 512, 64);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            let mut state = 12345u32;
            for v in d.iter_mut() {
                state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                *v = (state >> 24) as u8;
            }
        }
        let mut lab = Mat::default();
        imgproc::cvt_color_def(img.mat(), &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
        let (_, b) = channels(&img, Cue::ExactB).unwrap();
        let ld = lab.data_bytes().unwrap();
        for (i, v) in b.bytes().unwrap().iter().enumerate() {
            assert_eq!(*v, ld[i * 3 + 2], "pixel {i}");
        }
    }

    #[test]
    fn b_table_equals_cvtcolor_on_every_colour() {
        let lut = b_lut(Cue::ExactB).unwrap();
        let mut slab =
            Mat::new_rows_cols_with_default(256, 256, core::CV_8UC3, core::Scalar::all(0.0))
                .unwrap();
        let mut lab = Mat::default();
        let mut wrong = 0usize;
        for b in 0..256usize {
            {
                let d = slab.data_bytes_mut().unwrap();
                for g in 0..256usize {
                    for r in 0..256usize {
                        let i = (g * 256 + r) * 3;
                        d[i] = b as u8;
                        d[i + 1] = g as u8;
                        d[i + 2] = r as u8;
                    }
                }
            }
            imgproc::cvt_color_def(&slab, &mut lab, imgproc::COLOR_BGR2Lab).unwrap();
            let ld = lab.data_bytes().unwrap();
            for g in 0..256usize {
                for r in 0..256usize {
                    let want = ld[(g * 256 + r) * 3 + 2];
                    let got = lut.at(b_index(b as u8, g as u8, r as u8));
                    if want != got {
                        if wrong < 10 {
                            eprintln!("bgr ({b}, {g}, {r}): cvtColor {want}, table {got}");
                        }
                        wrong += 1;
                    }
                }
            }
        }
        assert_eq!(wrong, 0, "colours whose B differs from cvtColor");
    }

    /// A fresh table read from four threads at once, each in its own order, so that threads
    /// meet on blocks being filled: every colour of a coarse grid (all 16384 blocks) reads the
    /// per-pixel value from every thread, for both cues.
    #[test]
    fn b_table_fills_blocks_alike_from_many_threads() {
        for cue in [Cue::ExactB, Cue::Yellow] {
            let table = colour::BTable::new(cue);
            let colours: Vec<(u8, u8, u8)> = (0..=255u16)
                .step_by(3)
                .flat_map(|b| (0..=255u16).step_by(3).map(move |g| (b, g)))
                .flat_map(|(b, g)| (0..=255u16).step_by(3).map(move |r| (b, g, r)))
                .map(|(b, g, r)| (b as u8, g as u8, r as u8))
                .collect();
            // The per-pixel B of every colour, computed once as one image row.
            let mut img = solid([0, 0, 0], colours.len() as i32, 1);
            for (px, (b, g, r)) in img
                .mat_mut()
                .data_bytes_mut()
                .unwrap()
                .chunks_exact_mut(3)
                .zip(&colours)
            {
                px.copy_from_slice(&[*b, *g, *r]);
            }
            let (_, want) = colour::channels_with(&img, cue, None).unwrap();
            let want = want.bytes().unwrap();
            let wrong: usize = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4usize)
                    .map(|t| {
                        let (table, colours) = (&table, &colours);
                        s.spawn(move || {
                            let n = colours.len();
                            (0..n)
                                .map(|k| (k * (2 * t + 1) + t * n / 4) % n)
                                .filter(|&k| {
                                    let (b, g, r) = colours[k];
                                    table.at(b_index(b, g, r)) != want[k]
                                })
                                .count()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(
                wrong, 0,
                "{cue:?}: lookups that differ from the per-pixel B"
            );
        }
    }

    /// `channels` gives the same L and B whether B comes from the cue's table (once built) or
    /// is computed per pixel, for both cues, on an image of many colours.
    #[test]
    fn channels_are_the_same_with_and_without_the_table() {
        let img = many_colours(512, 64);
        for cue in [Cue::ExactB, Cue::Yellow] {
            let (l0, b0) = colour::channels_with(&img, cue, None).unwrap();
            let (l1, b1) = colour::channels_with(&img, cue, Some(b_lut(cue).unwrap())).unwrap();
            assert_eq!(l0.bytes().unwrap(), l1.bytes().unwrap(), "{cue:?} L");
            assert_eq!(b0.bytes().unwrap(), b1.bytes().unwrap(), "{cue:?} B");
        }
    }

    /// The yellow cue keeps yellow paint's B (new, worn, orange in low sun) and sets red
    /// colours (tail lights, a red car, a red sign) to neutral; the table and the per-pixel
    /// path agree on every colour of a coarse grid.
    #[test]
    fn yellow_cue_keeps_yellow_paint_and_drops_red() {
        let cue = |bgr: [u8; 3]| {
            let img = solid(bgr, 4, 1);
            let (_, y) = channels(&img, Cue::Yellow).unwrap();
            let (_, b) = channels(&img, Cue::ExactB).unwrap();
            (y.bytes().unwrap()[0], b.bytes().unwrap()[0])
        };
        for paint in [
            [60, 190, 220],
            [110, 170, 200],
            [40, 150, 230],
            [90, 200, 230],
        ] {
            let (y, b) = cue(paint);
            assert!(b > 150, "{paint:?} is yellow: B {b}");
            assert_eq!(y, b, "{paint:?}");
        }
        for red in [
            [30, 30, 230],
            [60, 40, 200],
            [40, 30, 150],
            [80, 60, 255],
            [0, 0, 255],
        ] {
            let (y, b) = cue(red);
            assert!(b > 150, "{red:?}: B {b}");
            assert_eq!(y, 128, "{red:?}");
        }
        let lut = b_lut(Cue::Yellow).unwrap();
        for b in (0..=255u16).step_by(5) {
            for g in (0..=255u16).step_by(5) {
                for r in (0..=255u16).step_by(5) {
                    let (b, g, r) = (b as u8, g as u8, r as u8);
                    let (y, _) = cue([b, g, r]);
                    assert_eq!(lut.at(b_index(b, g, r)), y, "bgr ({b}, {g}, {r})");
                }
            }
        }
    }

    #[test]
    fn white_and_yellow_stripes_are_kept_asphalt_is_not() {
        let mut img = solid([60, 60, 60], 100, 20);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            for y in 0..20 {
                for x in 10..15 {
                    let i = (y * 100 + x) * 3;
                    d[i..i + 3].copy_from_slice(&[250, 250, 250]);
                }
                for x in 80..85 {
                    let i = (y * 100 + x) * 3;
                    d[i..i + 3].copy_from_slice(&[30, 210, 230]); // yellow in BGR
                }
            }
        }
        let reference = ThresholdConfig {
            method: ThresholdMethod::GlobalMax,
            ..Default::default()
        };
        let t = threshold(&img, &reference).unwrap();
        let MaskRef::View(m) = t.mask_as_computed() else {
            panic!("a whole-view threshold gives a whole-view mask");
        };
        let m = m.bytes().unwrap();
        assert_eq!(m[5 * 100 + 12], 255, "white kept");
        assert_eq!(m[5 * 100 + 82], 255, "yellow kept");
        assert_eq!(m[5 * 100 + 50], 0, "asphalt dropped");
        assert_eq!(t.mask().unwrap().count().unwrap(), 2 * 5 * 20);
    }

    /// A 200x20 road of grey `road`, with `paint(x) -> Some(bgr)` drawn on every row.
    fn road_with(road: u8, paint: impl Fn(usize) -> Option<[u8; 3]>) -> BgrFrame {
        let mut img = solid([road, road, road], 200, 20);
        {
            let d = img.mat_mut().data_bytes_mut().unwrap();
            for y in 0..20 {
                for x in 0..200 {
                    if let Some(c) = paint(x) {
                        let i = (y * 200 + x) * 3;
                        d[i..i + 3].copy_from_slice(&c);
                    }
                }
            }
        }
        img
    }

    fn kept(img: &BgrFrame) -> Vec<usize> {
        let t = threshold(img, &ThresholdConfig::default()).unwrap();
        let m = t.mask().unwrap();
        let d = m.bytes().unwrap();
        (0..200).filter(|x| d[10 * 200 + x] == 255).collect()
    }

    #[test]
    fn local_contrast_keeps_stripes_and_drops_edges_seams_and_flat_images() {
        // A white stripe (x 90..105) and a yellow one (x 140..150) on asphalt: kept.
        let img = road_with(70, |x| match x {
            90..=104 => Some([235, 235, 235]),
            140..=149 => Some([40, 190, 210]),
            _ => None,
        });
        let k = kept(&img);
        assert!((90..=104).all(|x| k.contains(&x)), "{k:?}");
        assert!((140..=149).all(|x| k.contains(&x)), "{k:?}");
        assert_eq!(k.len(), 25, "{k:?}");
        // The same stripe in shade (everything at a third of the light): still kept.
        let shade = road_with(23, |x| (90..=104).contains(&x).then_some([78, 78, 78]));
        assert_eq!(kept(&shade).len(), 15);
        // A shadow edge / asphalt-concrete seam: dark left, light right. Nothing passes.
        let edge = road_with(60, |x| (x >= 100).then_some([170, 170, 170]));
        assert!(kept(&edge).is_empty(), "{:?}", kept(&edge));
        // A tar seam (dark stripe) on light concrete: nothing.
        let seam = road_with(160, |x| (95..=104).contains(&x).then_some([40, 40, 40]));
        assert!(kept(&seam).is_empty());
        // A flat grey image: nothing (the reference's max-scaling keeps every pixel).
        let flat = solid([128, 128, 128], 200, 20);
        assert!(kept(&flat).is_empty());
        let reference = ThresholdConfig {
            method: ThresholdMethod::GlobalMax,
            ..Default::default()
        };
        assert_eq!(
            threshold(&flat, &reference)
                .unwrap()
                .mask()
                .unwrap()
                .count()
                .unwrap(),
            200 * 20
        );
        // A region more than twice the widest marking (a bright patch of 90 px): its inside
        // is as bright as its sides, its edges have a bright side. Nothing passes.
        let patch = road_with(70, |x| (55..145).contains(&x).then_some([230, 230, 230]));
        assert!(kept(&patch).is_empty(), "{:?}", kept(&patch));
    }

    #[test]
    fn b_is_not_scaled_below_the_gate() {
        // Gray image: B = 128 everywhere, below the 175 gate: nothing yellow.
        let img = solid([90, 90, 90], 20, 20);
        let t = threshold(
            &img,
            &ThresholdConfig {
                l_min: 254,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!t.b_was_scaled);
        assert_eq!(t.b_scaled().unwrap().bytes().unwrap()[0], 128);
        assert_eq!(t.l_scaled().unwrap().bytes().unwrap()[0], 255);
    }
}
