//! Frames sampled from a video, for the tools that work on stills (`lanes tune`, `lanes
//! perspective`) and for self-calibration: frames spread evenly over the clip or a window of
//! it, read only through `video::VideoSource`'s public API (`open`, `seek`, `read`, `skip`);
//! and how many decoded frames self-calibration may keep for the run (the memory budget and the
//! search window it holds).

use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use crate::lane::shot::LumaSample;
use crate::lane::track::{ShotTracker, CONFIRM_FRAMES};
use crate::video::VideoSource;
use std::collections::VecDeque;
use std::path::Path;

/// One sampled frame, its 0-based index in the video and its time.
#[derive(Debug, Clone)]
pub struct SampledFrame {
    pub index: usize,
    /// `index` over the video's frame rate, seconds (`None` when the video gives no rate).
    pub at_s: Option<f64>,
    pub frame: BgrFrame,
}

/// Default number of frames `lanes tune` samples from each video.
pub const DEFAULT_FRAMES: usize = 12;

pub use crate::base::stats::evenly_spaced;

/// Frame indices sampled from window `k` of a video (seconds `k * window_s` to
/// `(k + 1) * window_s`): `samples` of them, evenly spaced, centred in their slots, none past
/// the announced end (`announced` <= 0: not announced); empty when the video ends before it.
pub fn window_samples(
    k: usize,
    announced: i64,
    fps: f64,
    window_s: f64,
    samples: usize,
) -> Vec<usize> {
    let window = (window_s * fps).round().max(1.0) as i64;
    let start = window.saturating_mul(k as i64);
    let n_frames = if announced > 0 {
        (announced - start).clamp(0, window)
    } else {
        window
    };
    evenly_spaced(n_frames as usize, samples.max(1))
        .into_iter()
        .map(|i| i + start as usize)
        .collect()
}

/// The frames halfway between consecutive `samples` (ascending), and between the last and
/// `end` (the frame after the last one read).
pub fn midpoints(samples: &[usize], end: usize) -> Vec<usize> {
    let mut out: Vec<usize> = samples.windows(2).map(|p| (p[0] + p[1]) / 2).collect();
    if let Some(&last) = samples.last() {
        if end > last + 1 {
            out.push((last + end) / 2);
        }
    }
    out.dedup();
    out
}

/// `count` frames spread evenly over the video at `path`. Each is found by seeking when the
/// backend confirms the position, else by reading on from the start (exact on any file). A
/// clip that announces no frame count is read through once to count them. Fewer frames come
/// back when the clip is shorter; none is an error naming the file.
pub fn sample_video_frames(path: &Path, count: usize) -> Result<Vec<SampledFrame>> {
    let mut src = VideoSource::open(path)?;
    let total = if src.announced_frames > 0 {
        src.announced_frames as usize
    } else {
        let mut n = 0;
        while src.skip()? {
            n += 1;
        }
        src = VideoSource::open(path)?;
        n
    };
    let wanted = evenly_spaced(total, count.max(1));
    let out = read_frames_at(&mut src, 0, &wanted, true, None)?;
    if out.is_empty() {
        return Err(Error::Video {
            path: path.to_path_buf(),
            message: "no frame could be read to sample".into(),
        });
    }
    Ok(out)
}

/// Cuts among the frames decoded while sampling (the frame loop's rule, `lane::shot`, on the
/// decoder's Y plane as stored), so that a search can keep to one shot of an edited video. A
/// frame that is not 8-bit planar YUV, or frames passed over by a seek, leave it `blind`.
/// A frame is judged once the [`CONFIRM_FRAMES`] after it are seen (as the frame loop judges
/// it, reading them ahead), or when the watch ends or goes blind, with those seen by then.
#[derive(Debug, Clone)]
pub struct ShotWatch {
    tracker: ShotTracker,
    /// Frames seen and not judged yet, oldest first.
    waiting: VecDeque<(usize, LumaSample)>,
    /// Frames that begin a new shot, ascending (those judged so far: see `finish`).
    pub cuts: Vec<usize>,
    pub blind: bool,
}

impl ShotWatch {
    /// Watch with `tracking.cut_ratio` `ratio`.
    pub fn new(ratio: f64) -> Self {
        Self {
            tracker: ShotTracker::new(ratio),
            waiting: VecDeque::new(),
            cuts: Vec::new(),
            blind: false,
        }
    }

    fn see(&mut self, index: usize, sample: Option<LumaSample>) {
        match sample {
            Some(s) if !self.blind => {
                self.waiting.push_back((index, s));
                while self.waiting.len() > CONFIRM_FRAMES {
                    self.judge_oldest();
                }
            }
            Some(_) => {}
            None => self.go_blind(),
        }
    }

    /// Judge the oldest frame waiting, against the frames seen after it.
    fn judge_oldest(&mut self) {
        let Some((index, sample)) = self.waiting.pop_front() else {
            return;
        };
        let waiting = &self.waiting;
        if self
            .tracker
            .update(sample, &mut |k| waiting.get(k).map(|(_, s)| s.clone()))
        {
            self.cuts.push(index);
        }
    }

    /// Judge every frame still waiting, with the frames seen: the watch ends here.
    pub fn finish(&mut self) {
        while !self.waiting.is_empty() {
            self.judge_oldest();
        }
    }

    /// Frames from here on are not watched (passed over by a seek, or not planar YUV): those
    /// seen are judged first.
    pub fn go_blind(&mut self) {
        self.finish();
        self.blind = true;
    }
}

/// The frames at `indices` (ascending) of `src`, whose next frame is `from`. With `seek`, a
/// frame more than 50 ahead is reached by seeking when the backend confirms the position;
/// without, every frame is decoded in order (a frame decoded after a seek into an open GOP can
/// differ with the decoder's thread count: self-calibration must judge the same frames on every
/// machine). With `watch`, every frame decoded is watched for cuts. Stops early at the end of
/// the video.
pub fn read_frames_at(
    src: &mut VideoSource,
    from: usize,
    indices: &[usize],
    seek: bool,
    mut watch: Option<&mut ShotWatch>,
) -> Result<Vec<SampledFrame>> {
    let mut out = Vec::with_capacity(indices.len());
    let mut pos = from;
    for &i in indices {
        if i < pos {
            continue;
        }
        if seek && i > pos + 50 && src.seek(i)? {
            if let Some(w) = watch.as_deref_mut() {
                w.go_blind();
            }
            pos = i;
        }
        while pos < i {
            match watch.as_deref_mut() {
                Some(w) => match src.skip_sampled()? {
                    Some(sample) => w.see(pos, sample),
                    None => return Ok(out),
                },
                None => {
                    if !src.skip()? {
                        return Ok(out);
                    }
                }
            }
            pos += 1;
        }
        let frame = match watch.as_deref_mut() {
            Some(w) => src.read_frame_sampled()?.map(|(frame, sample)| {
                w.see(pos, sample);
                frame
            }),
            None => src.read_frame()?,
        };
        let Some(frame) = frame else {
            return Ok(out);
        };
        pos += 1;
        out.push(SampledFrame {
            index: i,
            at_s: (src.fps.is_finite() && src.fps > 0.0).then(|| i as f64 / src.fps),
            frame: frame.into_bgr()?,
        });
    }
    Ok(out)
}

/// Memory the frames decoded for self-calibration may hold so that the run reuses them: 1 GiB,
/// about 740 frames of 1280x720 or 330 of 1920x1080. Both rounds of samples of a long 25 fps
/// 720p video span 500 frames (690 MB; the first round alone 250); past the budget the frames
/// are dropped and the file is decoded again (about 1.5 s more for those 500 frames). On a
/// machine with less than 8 GiB the budget is an eighth of its memory (`record_budget_shared`).
pub const RECORD_BUDGET_BYTES: usize = 1 << 30;

/// The budget of one of `searches` self-calibrations running at once (`lanes batch --jobs`):
/// [`RECORD_BUDGET_BYTES`] each, all of them together at most an eighth of the memory.
pub fn record_budget_shared(searches: usize) -> usize {
    let n = searches.max(1);
    RECORD_BUDGET_BYTES.min(physical_memory().map_or(RECORD_BUDGET_BYTES, |m| m / 8 / n))
}

/// Physical memory, bytes (`None` when the system does not say).
fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf only reads system values.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page > 0).then(|| (pages as usize).saturating_mul(page as usize))
}

/// The search window whose frames fit a recording of `budget` bytes, frames of `frame_bytes`
/// at `fps`: `window_s`, or shorter, but not under [`MIN_WINDOW_S`]. The run then reads every
/// frame the search decoded from memory. Past the budget the recording is dropped and the
/// opening frames are decoded a second time: on a 40 s 1080p clip, whose 30 s window spans
/// twice what 1 GiB holds, that cost 2.1 s (5.72 s finding the geometry against 3.62 s given
/// it).
pub fn recordable_window_s(window_s: f64, budget: usize, frame_bytes: usize, fps: f64) -> f64 {
    if frame_bytes == 0 || !fps.is_finite() || fps <= 0.0 {
        return window_s;
    }
    let frames = (budget / frame_bytes) as f64;
    window_s.min((frames / fps).max(MIN_WINDOW_S))
}

/// The shortest search window, seconds: 5. Frames sampled from less road than that (150 m at
/// 110 km/h) share one stretch's bends, traffic and wear, and their median is no longer over
/// independent views; a larger frame than that budget holds (4K) is decoded twice instead.
pub const MIN_WINDOW_S: f64 = 5.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recording_budget_is_an_eighth_of_the_memory_at_most_one_gib() {
        // The kernel's own count of the memory (MemTotal, a little below the physical pages).
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kb: f64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let expected = (RECORD_BUDGET_BYTES as f64).min(kb * 1024.0 / 8.0);
        let b = record_budget_shared(1) as f64;
        assert!(
            (b - expected).abs() <= 0.05 * expected,
            "budget {b} vs {expected} ({kb} kB of memory)"
        );
        // Searches at once share an eighth of the memory, each at most 1 GiB.
        for n in [2usize, 16, 64] {
            let expected = (RECORD_BUDGET_BYTES as f64).min(kb * 1024.0 / 8.0 / n as f64);
            let b = record_budget_shared(n) as f64;
            assert!(
                (b - expected).abs() <= 0.05 * expected,
                "{n} searches: budget {b} vs {expected} ({kb} kB of memory)"
            );
        }
    }

    /// The window's frames fit the recording: 30 s of 720p at 25 fps do (776 frames of
    /// 1.38 MB in 1 GiB), 1080p's are cut to the 345 frames that fit (13.8 s at 25 fps, 11.5 s at
    /// 30), 4K at 60 fps stops at the 5 s floor, and an unknown size or rate keeps the window.
    #[test]
    fn the_search_window_is_what_the_recording_holds() {
        let gib = 1usize << 30;
        let (p720, p1080, p2160) = (1280 * 720 * 3 / 2, 1920 * 1080 * 3 / 2, 3840 * 2160 * 3 / 2);
        assert_eq!(recordable_window_s(30.0, gib, p720, 25.0), 30.0);
        let w = recordable_window_s(30.0, gib, p1080, 25.0);
        assert!((w - 345.0 / 25.0).abs() < 1e-9, "{w}");
        assert!(w * 25.0 * p1080 as f64 <= gib as f64);
        let w = recordable_window_s(30.0, gib, p1080, 30.0);
        assert!((w - 345.0 / 30.0).abs() < 1e-9, "{w}");
        assert_eq!(recordable_window_s(30.0, gib, p2160, 60.0), MIN_WINDOW_S);
        assert_eq!(recordable_window_s(30.0, gib, 0, 25.0), 30.0);
        assert_eq!(recordable_window_s(30.0, gib, p1080, 0.0), 30.0);
        assert_eq!(recordable_window_s(4.0, gib, p720, 25.0), 4.0);
    }

    #[test]
    fn evenly_spaced_indices_cover_the_clip() {
        assert_eq!(evenly_spaced(100, 4), vec![12, 37, 62, 87]);
        assert_eq!(evenly_spaced(3, 12), vec![0, 1, 2]);
        assert_eq!(evenly_spaced(0, 12), Vec::<usize>::new());
        assert!(
            crate::video::is_video_path(Path::new("a/B.MP4"))
                && !crate::video::is_video_path(Path::new("a.jpg"))
        );
    }

    #[test]
    fn window_samples_are_spread_over_the_window_and_inside_the_video() {
        let at = |k, n| window_samples(k, n, 25.0, 30.0, 24);
        let s = at(0, 200);
        assert_eq!(s.len(), 24);
        assert!(s[0] < 13 && *s.last().unwrap() >= 180 && *s.last().unwrap() < 200);
        assert!(s.windows(2).all(|p| p[1] > p[0]));
        let long = window_samples(0, 100_000, 30.0, 30.0, 24);
        assert!(*long.last().unwrap() < 900);
        assert_eq!(at(0, 5), vec![0, 1, 2, 3, 4]);
        // The next windows: 30 s further each, inside the video, none past its end.
        let w1 = at(1, 1000);
        assert_eq!(w1.len(), 24);
        assert!(w1[0] >= 750 && *w1.last().unwrap() < 1000, "{w1:?}");
        assert!(at(2, 1000).is_empty());
        assert_eq!(at(3, 0).len(), 24);
    }

    #[test]
    fn the_second_round_samples_halfway_between_the_first() {
        assert_eq!(midpoints(&[4, 12, 20], 25), vec![8, 16, 22]);
        assert_eq!(midpoints(&[4, 12, 20], 21), vec![8, 16]);
        assert_eq!(midpoints(&[0, 1, 2], 3), vec![0, 1]);
        assert!(midpoints(&[], 10).is_empty());
    }
}
