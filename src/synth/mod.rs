//! Synthetic scenes with known ground truth: chessboard views and road scenes through a known camera.

pub mod chessboard;
pub mod road;
