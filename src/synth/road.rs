//! Synthetic road rendering (placeholder).
