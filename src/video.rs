//! Video in and out (placeholder; filled in by the video work).
