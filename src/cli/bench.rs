//! `lanes bench` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct BenchArgs {}

pub fn run(_a: BenchArgs) -> Result<i32> {
    anyhow::bail!("bench: not implemented yet")
}
