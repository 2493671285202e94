//! Integration tests: `lanes eval`.
