//! Integration tests: `lanes image`.
