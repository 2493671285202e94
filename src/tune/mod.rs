//! The live threshold tuner: HTTP server and page (placeholder).
