//! `lanes synth` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct SynthArgs {}

pub fn run(_a: SynthArgs) -> Result<i32> {
    anyhow::bail!("synth: not implemented yet")
}
