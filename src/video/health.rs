//! What the decoder met in a stream (`StreamHealth`), and whether a run that read fewer frames
//! than the container announced was cut short, met corrupt frames or lost nothing
//! (`Shortfall`).

/// What the decoder met in a stream, shared with the frame loop (the decoder runs on a thread
/// of its own): a file cut short (a read error, or fewer packets than announced) is told from
/// frames the container itself leaves out (a cut with `-c copy` keeps packets that its edit
/// list drops) and from frames whose data is corrupt (packets refused, the file read to its
/// end).
#[derive(Debug, Default)]
pub struct StreamHealth {
    /// Video packets read (taken or refused by the decoder).
    pub packets: std::sync::atomic::AtomicUsize,
    /// Packets or frames the decoder refused.
    pub errors: std::sync::atomic::AtomicUsize,
    /// The container could not be read to its end.
    pub read_failed: std::sync::atomic::AtomicBool,
    /// The latest end (start + duration) of a packet of any stream read, microseconds.
    pub last_end_us: std::sync::atomic::AtomicI64,
    /// The container's start and duration, microseconds (duration 0: not known), and a frame's
    /// length at the stream's rate: where a whole file's packets end.
    pub span_us: (i64, i64),
    pub frame_us: f64,
}

impl StreamHealth {
    pub fn packets(&self) -> usize {
        self.packets.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn errors(&self) -> usize {
        self.errors.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// The health of a stream in a container that starts at `start_us` and lasts
    /// `duration_us` (0: not known), at `fps` frames a second.
    pub fn with_span(start_us: i64, duration_us: i64, fps: f64) -> Self {
        Self {
            span_us: (start_us, duration_us.max(0)),
            frame_us: if fps > 0.0 { 1e6 / fps } else { 40_000.0 },
            ..Default::default()
        }
    }
    /// A packet of any stream read, ending at `end_us` (microseconds).
    pub fn packet_ends_at(&self, end_us: i64) {
        self.last_end_us
            .fetch_max(end_us, std::sync::atomic::Ordering::Relaxed);
    }
    /// Whether the packets read reach the container's end (within `slack` frames), in any
    /// stream: a file cut short loses every stream's end, while the video of a whole file can
    /// end before its audio or subtitles, which then give the container its duration (a GPS
    /// track whose last line is shown after the last frame).
    fn reached_end(&self, slack: usize) -> bool {
        let (start, duration) = self.span_us;
        let last = self.last_end_us.load(std::sync::atomic::Ordering::Relaxed);
        duration > 0
            && (last - start) as f64 >= duration as f64 - (slack + 1) as f64 * self.frame_us
    }
    pub fn error(&self) {
        self.errors
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    /// Why a run that read `frames` of `announced` (from `start`) fell short, if it did
    /// beyond `slack`: `Truncated` (stopped there), `Undecodable(n)` (n frames refused, the
    /// rest read), or `None` (the container's own count was off: nothing is missing).
    pub fn shortfall(
        &self,
        frames: usize,
        wanted: usize,
        announced: usize,
        slack: usize,
    ) -> Shortfall {
        if frames + slack >= wanted {
            return Shortfall::None;
        }
        let whole = !self.read_failed.load(std::sync::atomic::Ordering::Relaxed)
            && (self.packets() + slack >= announced || self.reached_end(slack));
        match (whole, self.errors() > 0) {
            (false, _) => Shortfall::Truncated,
            (true, true) => Shortfall::Undecodable(wanted - frames),
            (true, false) => Shortfall::None,
        }
    }
}

/// [`StreamHealth::shortfall`]'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    None,
    Truncated,
    Undecodable(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(packets: usize, errors: usize, read_failed: bool) -> StreamHealth {
        let h = StreamHealth::default();
        h.packets
            .store(packets, std::sync::atomic::Ordering::Relaxed);
        h.errors.store(errors, std::sync::atomic::Ordering::Relaxed);
        h.read_failed
            .store(read_failed, std::sync::atomic::Ordering::Relaxed);
        h
    }

    #[test]
    fn a_cut_file_is_told_from_dropped_and_corrupt_frames() {
        // Every frame read: nothing is missing, whatever else.
        assert_eq!(
            health(10, 5, true).shortfall(65, 65, 65, 3),
            Shortfall::None
        );
        // A `-c copy` cut: 43 packets, the edit list drops 4, no error.
        assert_eq!(
            health(43, 0, false).shortfall(39, 43, 43, 3),
            Shortfall::None
        );
        // Corrupt data in the middle: every packet read, 9 frames refused.
        assert_eq!(
            health(65, 12, false).shortfall(56, 65, 65, 3),
            Shortfall::Undecodable(9)
        );
        // The file ends early (fewer packets), or a read fails: cut short.
        assert_eq!(
            health(40, 0, false).shortfall(40, 65, 65, 3),
            Shortfall::Truncated
        );
        assert_eq!(
            health(65, 0, true).shortfall(40, 65, 65, 3),
            Shortfall::Truncated
        );
    }

    #[test]
    fn a_video_shorter_than_the_container_s_other_streams_is_whole() {
        // 200 frames at 25 fps in a 22 s container (a subtitle line ends at 22 s): 550
        // announced, every packet read to the container's end.
        let h = StreamHealth::with_span(0, 22_000_000, 25.0);
        h.packets.store(200, std::sync::atomic::Ordering::Relaxed);
        h.packet_ends_at(8_000_000);
        h.packet_ends_at(22_000_000);
        assert_eq!(h.shortfall(200, 550, 550, 11), Shortfall::None);
        // The same file cut at 6 s: no stream reaches the end.
        let cut = StreamHealth::with_span(0, 22_000_000, 25.0);
        cut.packets.store(150, std::sync::atomic::Ordering::Relaxed);
        cut.packet_ends_at(6_000_000);
        assert_eq!(cut.shortfall(150, 550, 550, 11), Shortfall::Truncated);
        // A container that starts late (MPEG-TS at 1.4 s) is measured from its start.
        let ts = StreamHealth::with_span(1_400_000, 10_000_000, 25.0);
        ts.packets.store(100, std::sync::atomic::Ordering::Relaxed);
        ts.packet_ends_at(11_400_000);
        assert_eq!(ts.shortfall(100, 250, 250, 5), Shortfall::None);
    }
}
