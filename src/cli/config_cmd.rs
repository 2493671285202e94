//! `lanes config`: print the default configuration or check a file.

use anyhow::Result;
use clap::Args;
use lanes::base::config::Config;
use std::path::PathBuf;

#[derive(Args)]
pub struct ConfigArgs {
    /// Print the default configuration as TOML.
    #[arg(long)]
    print_default: bool,
    /// Check a configuration file and print it with defaults filled in.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
}

pub fn run(a: ConfigArgs) -> Result<i32> {
    if let Some(p) = a.check {
        let c = Config::load(&p).map_err(|e| lanes::base::config::in_file(&p, e))?;
        print!("{}", c.to_toml());
        return Ok(0);
    }
    if a.print_default {
        print!("{}", Config::default_toml());
        return Ok(0);
    }
    anyhow::bail!("nothing to do: use --print-default or --check FILE");
}
