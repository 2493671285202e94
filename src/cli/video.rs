//! `lanes video` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct VideoArgs {}

pub fn run(_a: VideoArgs) -> Result<i32> {
    anyhow::bail!("video: not implemented yet")
}
