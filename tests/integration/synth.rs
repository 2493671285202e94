//! Integration tests: `lanes synth`.
