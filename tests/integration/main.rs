//! Integration tests: run the real `lanes` binary on real and synthetic inputs.
