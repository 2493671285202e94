//! Integration tests: `lanes tune`.
