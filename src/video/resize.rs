//! One frame size per stream: a stream whose frames change size part way (files of two cameras
//! joined by `cat`, a recorder that switched resolution) has the later frames scaled to its
//! first size, as `ffmpeg` itself does when it writes such a stream, so that the run goes on;
//! the change shows as a cut, and the frames after it get their own geometry as a shot.

use ffmpeg::software::scaling::{Context, Flags};
use ffmpeg_next as ffmpeg;

/// Keeps decoded frames at the stream's first size (`keep`).
pub(crate) struct SizeKeeper {
    size: (u32, u32),
    scaler: Option<Scaler>,
}

struct Scaler(Context);

// SAFETY: a SwsContext may be used from any thread, one at a time (`&mut self` in `keep`), as
// `yuv::Sws` is.
unsafe impl Send for Scaler {}

impl SizeKeeper {
    /// For a stream whose frames are `size` (width, height, before rotation).
    pub(crate) fn new(size: (u32, u32)) -> Self {
        Self { size, scaler: None }
    }

    /// `f` as it is when it has the stream's size; else scaled to it (bicubic, bit-exact: a
    /// frame the analysis reads is the same on every machine), same pixel format and time.
    pub(crate) fn keep(
        &mut self,
        f: ffmpeg::frame::Video,
    ) -> std::result::Result<ffmpeg::frame::Video, String> {
        if (f.width(), f.height()) == self.size || f.width() == 0 || f.height() == 0 {
            return Ok(f);
        }
        let (w, h) = self.size;
        let fits = self.scaler.as_ref().is_some_and(|s| {
            let i = s.0.input();
            (i.width, i.height, i.format) == (f.width(), f.height(), f.format())
        });
        if !fits {
            let flags = Flags::BICUBIC | Flags::ACCURATE_RND | Flags::BITEXACT;
            let ctx = Context::get(f.format(), f.width(), f.height(), f.format(), w, h, flags)
                .map_err(|e| {
                    format!(
                        "a {}x{} frame in a {w}x{h} stream cannot be scaled to it ({e})",
                        f.width(),
                        f.height()
                    )
                })?;
            self.scaler = Some(Scaler(ctx));
        }
        let Some(s) = self.scaler.as_mut() else {
            return Ok(f);
        };
        let mut out = ffmpeg::frame::Video::empty();
        s.0.run(&f, &mut out).map_err(|e| {
            format!(
                "scaling a {}x{} frame to {w}x{h} ({e})",
                f.width(),
                f.height()
            )
        })?;
        out.set_pts(f.timestamp().or(f.pts()));
        out.set_color_range(f.color_range());
        Ok(out)
    }
}
