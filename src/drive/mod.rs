//! Drive records above the frame loop: summaries of telemetry, events, drive reports. Imports `video`, `lane` and `base`.

pub mod events;
pub mod outputs;
pub mod report;
