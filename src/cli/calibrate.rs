//! `lanes calibrate` and `lanes undistort` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct CalibrateArgs {}

#[derive(Args)]
pub struct UndistortArgs {}

pub fn run_calibrate(_a: CalibrateArgs) -> Result<i32> {
    anyhow::bail!("calibrate: not implemented yet")
}

pub fn run_undistort(_a: UndistortArgs) -> Result<i32> {
    anyhow::bail!("undistort: not implemented yet")
}
