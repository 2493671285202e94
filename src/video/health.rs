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
}

impl StreamHealth {
    pub fn packets(&self) -> usize {
        self.packets.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn errors(&self) -> usize {
        self.errors.load(std::sync::atomic::Ordering::Relaxed)
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
            && self.packets() + slack >= announced;
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
}
