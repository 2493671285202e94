//! Finding a camera's geometry: chessboard calibration, the perspective from straight-road frames, self-calibration from a video's own frames, and sampling frames for them. Imports `video`, `lane` and `base`.

pub mod autoperspective;
pub mod calibrate;
pub mod found;
pub mod resolve;
pub mod sample;
pub mod selfcal;
pub mod stills;
pub mod work_scale;
