//! `lanes config`: print the default configuration or check a file.

use anyhow::Result;
use clap::Args;
use lanes::base::config::{Config, Preset};
use std::path::PathBuf;

#[derive(Args)]
pub struct ConfigArgs {
    /// Print the default configuration as TOML (with `--preset reference`, the reference
    /// preset's).
    #[arg(long)]
    print_default: bool,
    /// Check a configuration file and print it with the preset's values (robust unless
    /// `--preset` says otherwise) filled in.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    #[command(flatten)]
    pub preset: super::preset::ConfigPresetArgs,
}

pub fn run(a: ConfigArgs) -> Result<i32> {
    let preset = super::common::preset();
    if let Some(p) = a.check {
        let c = Config::load_over(Some(&p), preset)?;
        outln!("{}", c.to_toml().trim_end_matches('\n'));
        return Ok(0);
    }
    if a.print_default {
        match preset {
            Preset::Robust => outln!("{}", Config::default_toml().trim_end_matches('\n')),
            Preset::Reference => outln!(
                "# lanes configuration (the reference preset). Units: pixels unless named.\n{}",
                Config::reference().to_toml().trim_end_matches('\n')
            ),
        }
        return Ok(0);
    }
    anyhow::bail!("nothing to do: use --print-default or --check FILE");
}
