//! Perspective quad and scale estimated from straight-road frames (placeholder).
