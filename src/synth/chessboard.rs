//! Synthetic chessboard rendering (placeholder).
