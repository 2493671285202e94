//! Cooperative interruption. SIGINT and SIGTERM set a flag (the number of the first signal)
//! that frame loops and job loops poll between frames/jobs, so they can finish what is in
//! flight, finalise their outputs and report "interrupted" instead of dying mid-write.
//!
//! A second signal aborts at once: the handler deletes the files registered with
//! `AbortCleanup` (hidden partial outputs) and `_exit`s with 128 + the signal. It only uses
//! async-signal-safe calls (atomic loads, `unlink`, `_exit`) on C strings built beforehand.

use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

/// Slots for the paths the abort handler deletes (partial outputs being written right now).
const CLEANUP_SLOTS: usize = 64;

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Paths to delete on abort: NUL-terminated strings leaked on purpose (a few dozen bytes per
/// output file), so the handler never reads freed memory.
static CLEANUP: [AtomicPtr<libc::c_char>; CLEANUP_SLOTS] = [EMPTY_SLOT; CLEANUP_SLOTS];

/// Delete every registered path and leave the process with `code`, from a signal handler.
fn abort_now(code: i32) -> ! {
    for slot in CLEANUP.iter() {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` is a leaked, NUL-terminated string that is never freed; `unlink`
            // is async-signal-safe.
            unsafe {
                libc::unlink(p);
            }
        }
    }
    // SAFETY: `_exit` is async-signal-safe and skips destructors and atexit handlers, which
    // may hold locks the interrupted thread owns.
    unsafe { libc::_exit(code) }
}

/// A file the abort handler (second SIGINT/SIGTERM) deletes while this guard lives. Register
/// a partial output when it is created; drop the guard once it is renamed or removed.
#[derive(Debug)]
pub struct AbortCleanup {
    slot: Option<usize>,
}

impl AbortCleanup {
    /// Register `path`. With every slot taken (more than 64 outputs open at once) the path is
    /// not registered; the normal error paths still remove it.
    pub fn register(path: &Path) -> Self {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return Self { slot: None };
        };
        let raw = c.into_raw();
        for (i, slot) in CLEANUP.iter().enumerate() {
            if slot
                .compare_exchange(
                    std::ptr::null_mut(),
                    raw,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                return Self { slot: Some(i) };
            }
        }
        // SAFETY: `raw` came from `CString::into_raw` above and was never shared.
        drop(unsafe { CString::from_raw(raw) });
        Self { slot: None }
    }
}

impl Drop for AbortCleanup {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The string is leaked: a handler running now may still be reading it.
            CLEANUP[i].store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

/// Ignore SIGXFSZ, so that a write past the file size limit (`ulimit -f`) fails with EFBIG and
/// is reported as an error, instead of killing the process with a partial file left behind.
pub fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// A shared "please stop" flag. `Cancel::default()` never fires unless `request` is called;
/// `Cancel::on_signals()` fires on SIGINT or SIGTERM.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    signal: Arc<AtomicUsize>,
}

impl Cancel {
    /// A flag set by SIGINT or SIGTERM (the first one received is kept). A second signal
    /// aborts at once (exit 128 + signal) after deleting the `AbortCleanup` paths.
    pub fn on_signals() -> std::io::Result<Self> {
        let c = Self::default();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let flag = Arc::clone(&c.signal);
            // Safety: the handler only does an atomic compare-exchange, and on a second
            // signal `abort_now` (unlink and _exit; all async-signal-safe).
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    if flag
                        .compare_exchange(0, sig as usize, Ordering::SeqCst, Ordering::SeqCst)
                        .is_err()
                    {
                        abort_now(128 + sig);
                    }
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

    #[test]
    fn abort_cleanup_slot_is_taken_and_released() {
        let path = Path::new("/tmp/lanes-abort-cleanup-test.partial.mp4");
        let taken = |p: &Path| {
            CLEANUP.iter().any(|s| {
                let q = s.load(Ordering::SeqCst);
                // SAFETY: registered strings are leaked NUL-terminated C strings.
                !q.is_null()
                    && unsafe { std::ffi::CStr::from_ptr(q) }.to_bytes()
                        == p.as_os_str().as_encoded_bytes()
            })
        };
        let g = AbortCleanup::register(path);
        assert!(g.slot.is_some());
        assert!(taken(path));
        drop(g);
        assert!(!taken(path));
    }
}
