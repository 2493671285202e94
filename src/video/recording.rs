//! The frames a `VideoSource` keeps while it records, for `rewind`: references to the
//! decoder's buffers (no pixels copied), up to a memory budget.

use ffmpeg::ffi;
use ffmpeg_next as ffmpeg;

/// The frames a source keeps while it records (references to the decoder's buffers, not
/// copies), up to a memory budget.
pub(super) struct Recording {
    frames: Vec<ffmpeg::frame::Video>,
    bytes: usize,
    max_bytes: usize,
    /// `next_index` when the recording began.
    start_index: usize,
    /// The budget ran out: the frames were dropped and `rewind` cannot replay them.
    overflowed: bool,
}

impl Recording {
    /// An empty recording that may keep `max_bytes` of frames, begun at frame `start_index`.
    pub(super) fn new(max_bytes: usize, start_index: usize) -> Self {
        Recording {
            frames: Vec::new(),
            bytes: 0,
            max_bytes,
            start_index,
            overflowed: false,
        }
    }

    /// The frame index the recording began at and the frames kept, in order; `None` when
    /// the budget ran out (they were dropped and cannot be replayed).
    pub(super) fn into_frames(self) -> Option<(usize, Vec<ffmpeg::frame::Video>)> {
        (!self.overflowed).then_some((self.start_index, self.frames))
    }

    /// Keep a reference to `f`; once the budget is spent, drop every frame kept.
    pub(super) fn keep(&mut self, f: &ffmpeg::frame::Video) {
        if self.overflowed {
            return;
        }
        self.bytes += frame_bytes(f);
        let r = if self.bytes <= self.max_bytes {
            // SAFETY: a new reference to a valid decoded frame (no pixels copied).
            unsafe { ffi::av_frame_clone(f.as_ptr()) }
        } else {
            std::ptr::null_mut()
        };
        if r.is_null() {
            self.overflowed = true;
            self.frames = Vec::new();
        } else {
            // SAFETY: `r` is a frame of our own, freed by the wrapper that now owns it.
            self.frames.push(unsafe { ffmpeg::frame::Video::wrap(r) });
        }
    }
}

/// Bytes a decoded frame holds: its planes' rows times their strides.
fn frame_bytes(f: &ffmpeg::frame::Video) -> usize {
    (0..f.planes())
        .map(|i| f.stride(i) * f.plane_height(i) as usize)
        .sum()
}
