//! Integration tests: `lanes perspective`.
