//! Integration tests: `lanes video`.
