//! `lanes tune` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct TuneArgs {}

pub fn run(_a: TuneArgs) -> Result<i32> {
    anyhow::bail!("tune: not implemented yet")
}
