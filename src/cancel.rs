//! Cooperative interruption. SIGINT and SIGTERM set a flag (the number of the first signal)
//! that frame loops and job loops poll between frames/jobs, so they can finish what is in
//! flight, finalise their outputs and report "interrupted" instead of dying mid-write.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A shared "please stop" flag. `Cancel::default()` never fires unless `request` is called;
/// `Cancel::on_signals()` fires on SIGINT or SIGTERM.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    signal: Arc<AtomicUsize>,
}

impl Cancel {
    /// A flag set by SIGINT or SIGTERM (the first one received is kept).
    pub fn on_signals() -> std::io::Result<Self> {
        let c = Self::default();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let flag = Arc::clone(&c.signal);
            // Safety: the handler only does an atomic compare-exchange (async-signal-safe).
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    let _ =
                        flag.compare_exchange(0, sig as usize, Ordering::SeqCst, Ordering::SeqCst);
                })?;
            }
        }
        Ok(c)
    }

    /// Ask to stop as if `signal` had been received (tests, or a worker's own shutdown).
    pub fn request(&self, signal: i32) {
        let _ =
            self.signal
                .compare_exchange(0, signal as usize, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    /// The signal that asked to stop, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// The conventional exit code for the signal (128 + number: 130 for SIGINT, 143 for SIGTERM).
    pub fn exit_code(&self) -> Option<i32> {
        self.signal().map(|s| 128 + s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_request_wins_and_maps_to_exit_code() {
        let c = Cancel::default();
        assert!(!c.requested());
        assert_eq!(c.exit_code(), None);
        let d = c.clone();
        d.request(15);
        c.request(2);
        assert_eq!(c.signal(), Some(15));
        assert_eq!(c.exit_code(), Some(143));
    }
}
