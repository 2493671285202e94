//! `lanes eval` (placeholder).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct EvalArgs {}

pub fn run(_a: EvalArgs) -> Result<i32> {
    anyhow::bail!("eval: not implemented yet")
}
