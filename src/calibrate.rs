//! Chessboard camera calibration (placeholder; filled in by the calibration work).
