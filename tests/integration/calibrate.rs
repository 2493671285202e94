//! Integration tests: `lanes calibrate`.
