//! `lanes perspective` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct PerspectiveArgs {}

pub fn run(_a: PerspectiveArgs) -> Result<i32> {
    anyhow::bail!("perspective: not implemented yet")
}
