//! `--preset`, only on the commands where it acts: a configuration preset (`robust`,
//! `reference`) on every command that runs the lane pipeline or reads its configuration, and
//! also libx264's speed preset on those that write videos (`video`, `batch`, `queue work`).
//! `calibrate`, `undistort`, `perspective` and `synth` use neither and do not offer it.

use clap::{Args, ValueEnum};
use lanes::base::config::Preset;
use lanes::video::X264Preset;
use std::sync::OnceLock;

/// A `--preset` value: a configuration preset or libx264's speed preset.
#[derive(Debug, Clone, Copy)]
pub enum PresetArg {
    Config(Preset),
    X264(X264Preset),
}

fn parse_preset(s: &str) -> Result<PresetArg, String> {
    if let Ok(p) = Preset::from_str(s, true) {
        return Ok(PresetArg::Config(p));
    }
    if let Ok(p) = X264Preset::from_str(s, true) {
        return Ok(PresetArg::X264(p));
    }
    Err(format!(
        "unknown preset {s:?}: a configuration preset (robust, reference) or libx264's speed \
         preset (ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, \
         placebo)"
    ))
}

fn parse_config_preset(s: &str) -> Result<PresetArg, String> {
    match parse_preset(s)? {
        PresetArg::X264(_) => Err(format!(
            "{s:?} is libx264's speed preset, for the commands that write videos (video, batch, \
             queue work); this command takes a configuration preset: robust or reference"
        )),
        p => Ok(p),
    }
}

/// `--preset` on commands that write videos.
#[derive(Args, Clone, Debug, Default)]
pub struct VideoPresetArgs {
    /// A configuration preset: `robust` (the default: local-contrast markings, robust fits,
    /// confidence, Kalman tracking) or `reference` (the Udacity reference pipeline's behaviour
    /// and numbers), a `--config` file's keys applying on top; or libx264's speed preset for
    /// the videos written (`ultrafast` .. `placebo`, default `veryfast`). The two sets of names
    /// do not overlap; give `--preset` twice for one of each.
    #[arg(long, value_name = "NAME", value_parser = parse_preset, action = clap::ArgAction::Append)]
    pub preset: Vec<PresetArg>,
}

/// `--preset` on commands that run the pipeline or read its configuration but write no video.
#[derive(Args, Clone, Debug, Default)]
pub struct ConfigPresetArgs {
    /// A configuration preset: `robust` (the default: local-contrast markings, robust fits,
    /// confidence, Kalman tracking) or `reference` (the Udacity reference pipeline's behaviour
    /// and numbers), a `--config` file's keys applying on top.
    #[arg(long, value_name = "NAME", value_parser = parse_config_preset, action = clap::ArgAction::Append)]
    pub preset: Vec<PresetArg>,
}

/// The configuration preset of this run (resolved once in `cli::run`).
static PRESET: OnceLock<Preset> = OnceLock::new();
/// The libx264 speed preset of this run (resolved once in `cli::run`).
static X264_PRESET: OnceLock<X264Preset> = OnceLock::new();

/// Resolve the run's `--preset` values once (the last of each kind wins).
pub fn set(values: &[PresetArg]) {
    let mut config = Preset::Robust;
    let mut x264 = X264Preset::Veryfast;
    for p in values {
        match *p {
            PresetArg::Config(c) => config = c,
            PresetArg::X264(x) => x264 = x,
        }
    }
    let _ = PRESET.set(config);
    let _ = X264_PRESET.set(x264);
}

/// The configuration preset chosen on the command line (robust by default).
pub fn config() -> Preset {
    PRESET.get().copied().unwrap_or(Preset::Robust)
}

/// The libx264 speed preset chosen on the command line (veryfast by default).
pub fn x264() -> X264Preset {
    X264_PRESET.get().copied().unwrap_or(X264Preset::Veryfast)
}
