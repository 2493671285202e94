//! Typed pipeline configuration: serde sections with documented defaults and one `validate()`.
//!
//! Every section rejects unknown keys; missing keys take the defaults below. The
//! defaults are those of the reference Udacity pipeline (1280x720 camera).
//!
//! `sections` holds the sections and their defaults, `validate` the one range check.

mod sections;
mod validate;

pub use sections::*;

use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The whole configuration: one section per stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub threshold: ThresholdConfig,
    pub perspective: PerspectiveConfig,
    pub search: SearchConfig,
    pub tracking: TrackingConfig,
    pub confidence: ConfidenceConfig,
    pub render: RenderConfig,
    pub units: UnitsConfig,
    pub events: EventsConfig,
    #[serde(skip_serializing_if = "CameraConfig::is_empty")]
    pub camera: CameraConfig,
}

/// Named starting points for the configuration (`--preset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The defaults: local-contrast markings, robust fits, confidence, Kalman tracking.
    Robust,
    /// The reference Udacity pipeline (global max-scaled thresholds, plain least squares, no
    /// confidence gate, mean of the last 5 fits): reproduces the reference's numbers.
    Reference,
}

impl Config {
    /// Parse a TOML string (unknown keys are rejected) and validate it.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self> {
        let cfg: Config = toml::from_str(text).map_err(|e| Error::ConfigParse {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Load a TOML file and validate it.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_toml_str(&text, path)
    }

    /// The default configuration as TOML.
    pub fn default_toml() -> String {
        let body = toml::to_string(&Config::default()).unwrap_or_default();
        format!(
            "# lanes configuration (defaults). Units: pixels unless named; see `lanes config --help`.\n{body}"
        )
    }

    /// Serialize to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The configuration a preset starts from.
    pub fn preset(p: Preset) -> Self {
        match p {
            Preset::Robust => Self::default(),
            Preset::Reference => Self::reference(),
        }
    }

    /// The reference Udacity pipeline: global max-scaled thresholds, no confidence gate, the
    /// mean of the last five fits, measured in the fixed view (no online pitch, no restart at
    /// cuts, no vehicle-ahead rule).
    pub fn reference() -> Self {
        let mut c = Self::default();
        c.threshold.method = ThresholdMethod::GlobalMax;
        c.tracking.method = TrackingMethod::Average;
        // The reference measures in its fixed view.
        c.tracking.online_pitch = false;
        // Nor does it know cuts.
        c.tracking.restart_at_cuts = false;
        c.confidence.min_line = 0.0;
        c.search.robust = false;
        // Every row, as before rows were thinned: the reference's numbers stay as they were.
        c.search.band_min_source_rows = 0.0;
        // Nor does it look for a vehicle ahead.
        c.search.occluder_share = 0.0;
        // Nor smooth noisy frames.
        c.threshold.smooth_noise = false;
        c
    }

    /// The configuration a command runs with: the file (if any) merged over `preset`, then
    /// validated.
    pub fn load_over(path: Option<&Path>, preset: Preset) -> Result<Self> {
        let cfg = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| Error::ConfigParse {
                    path: p.to_path_buf(),
                    message: format!("cannot read config ({e})"),
                })?;
                Self::from_toml_str_over(&text, p, preset).map_err(|e| in_file(p, e))?
            }
            None => Self::preset(preset),
        };
        match path {
            Some(p) => cfg.validate().map_err(|e| in_file(p, e))?,
            None => cfg.validate()?,
        }
        Ok(cfg)
    }

    /// Whether a config file names a section (e.g. `perspective`): a file that leaves the
    /// perspective out lets `lanes video` find the geometry in the video.
    pub fn file_names_section(path: &Path, section: &str) -> Result<bool> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::ConfigParse {
            path: path.to_path_buf(),
            message: format!("cannot read config ({e})"),
        })?;
        let t: toml::Table = toml::from_str(&text).map_err(|e| Error::ConfigParse {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })?;
        Ok(t.contains_key(section))
    }

    /// Parse a TOML string over a preset (keys in the text override the preset's values).
    pub fn from_toml_str_over(text: &str, path: &Path, base: Preset) -> Result<Self> {
        let parse_err = |m: String| Error::ConfigParse {
            path: path.to_path_buf(),
            message: m,
        };
        let over: toml::Table = toml::from_str(text).map_err(|e| {
            if looks_like_camera_file(text) {
                return parse_err(
                    "an OpenCV camera file, not a lanes config (TOML): pass it with --camera"
                        .into(),
                );
            }
            match e.span() {
                Some(sp) => parse_err(format!(
                    "line {}: {} (not a lanes config TOML?)",
                    text[..sp.start.min(text.len())].matches('\n').count() + 1,
                    e.message().trim().replace('\n', "; ")
                )),
                None => parse_err(e.message().trim().replace('\n', "; ")),
            }
        })?;
        let preset: toml::Table = toml::from_str(&Self::preset(base).to_toml())
            .map_err(|e| parse_err(e.message().to_string()))?;
        let merged = merge(preset.clone(), over.clone());
        let cfg: Config = toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| {
                // The values' positions are gone once merged: the key is found by trying the
                // file's keys one at a time over the preset.
                let plain = plain_type_words(e.message());
                match culprit(&preset, &over) {
                    Some(key) => parse_err(match key_line(text, &key) {
                        Some(n) => format!("line {n}: {key}: {plain}"),
                        None => format!("{key}: {plain}"),
                    }),
                    None => parse_err(plain),
                }
            })?;
        cfg.validate()?;
        Ok(cfg)
    }
}

/// `over`'s sections' keys put over `base`'s (a section that is not a table replaces).
fn merge(mut base: toml::Table, over: toml::Table) -> toml::Table {
    for (section, v) in over {
        match (base.get_mut(&section), v) {
            (Some(toml::Value::Table(m)), toml::Value::Table(o)) => {
                for (k, v) in o {
                    m.insert(k, v);
                }
            }
            (_, v) => {
                base.insert(section, v);
            }
        }
    }
    base
}

/// The first of a config file's keys (`section.key`) that does not fit a `Config` alone over
/// `base`.
fn culprit(base: &toml::Table, over: &toml::Table) -> Option<String> {
    let fails = |one: toml::Table| {
        toml::Value::Table(merge(base.clone(), one))
            .try_into::<Config>()
            .is_err()
    };
    for (section, v) in over {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let mut inner = toml::Table::new();
                    inner.insert(k.clone(), v.clone());
                    let mut one = toml::Table::new();
                    one.insert(section.clone(), toml::Value::Table(inner));
                    if fails(one) {
                        return Some(format!("{section}.{k}"));
                    }
                }
            }
            v => {
                let mut one = toml::Table::new();
                one.insert(section.clone(), v.clone());
                if fails(one) {
                    return Some(section.clone());
                }
            }
        }
    }
    None
}

/// The line of `text` where `key` (`section.key`) is set: the first `key =` after the
/// `[section]` header (or anywhere, for a dotted or inline key).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let (section, name) = key.split_once('.').unwrap_or(("", key));
    let mut in_section = section.is_empty();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[') {
            in_section = h.trim_end_matches(']').trim() == section;
            continue;
        }
        let lhs = l.split('=').next().unwrap_or("").trim();
        if l.contains('=') && (in_section && lhs == name || lhs == key) {
            return Some(i + 1);
        }
    }
    None
}

/// serde's type names in words a user reads: "expected u8" is "expected a whole number
/// 0-255", "expected f64" is "expected a number".
fn plain_type_words(message: &str) -> String {
    let mut m = message.trim().replace('\n', "; ");
    for (from, to) in [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ] {
        m = m.replace(from, to);
    }
    m
}

/// Whether a file's text is an OpenCV FileStorage camera file (YAML or XML), the usual thing
/// given to `--config` by mistake.
pub fn looks_like_camera_file(text: &str) -> bool {
    let head = text.trim_start();
    head.starts_with("%YAML")
        || head.starts_with("<?xml")
        || text.contains("camera_matrix")
        || text.contains("opencv-matrix")
}

/// A config file's error naming the file: out-of-range values (`config key = value (...)`)
/// get the file's name in front; parse errors already carry it.
pub fn in_file(path: &Path, e: Error) -> Error {
    match e {
        Error::ConfigValue { .. } => Error::ConfigParse {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_toml_round_trips() {
        let text = Config::default_toml();
        let back = Config::from_toml_str(&text, Path::new("x.toml")).unwrap();
        assert_eq!(back, Config::default());
    }

    #[test]
    fn shipped_default_file_matches_defaults() {
        let text = include_str!("../../../config/default.toml");
        let back = Config::from_toml_str(text, Path::new("config/default.toml")).unwrap();
        assert_eq!(back, Config::default());
    }

    #[test]
    fn shipped_reference_file_is_the_reference_preset() {
        let text = include_str!("../../../config/reference.toml");
        let back = Config::from_toml_str(text, Path::new("config/reference.toml")).unwrap();
        assert_eq!(back, Config::reference());
        assert_eq!(Config::preset(Preset::Reference), Config::reference());
    }

    #[test]
    fn a_file_over_a_preset_keeps_the_preset_where_it_is_silent() {
        let c = Config::from_toml_str_over(
            "[search]\nwindows = 12\n",
            Path::new("c.toml"),
            Preset::Reference,
        )
        .unwrap();
        assert_eq!(c.search.windows, 12);
        assert_eq!(c.threshold.method, ThresholdMethod::GlobalMax);
        assert_eq!(c.tracking.method, TrackingMethod::Average);
        let err = Config::from_toml_str_over(
            "[confidence]\nmin_line = 2\n",
            Path::new("c.toml"),
            Preset::Robust,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "config confidence.min_line = 2 (expected 0..=1)"
        );
    }

    #[test]
    fn unknown_key_is_rejected_with_its_name() {
        let err =
            Config::from_toml_str("[search]\nwindowz = 3\n", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("windowz"), "{err}");
    }

    #[test]
    fn out_of_range_names_key_and_value() {
        let err =
            Config::from_toml_str("[search]\nwindows = 0\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "config search.windows = 0 (expected 1..=50)"
        );
        let err = Config::from_toml_str("[search]\nband_row_step = 9\n", Path::new("c.toml"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "config search.band_row_step = 9 (expected 1..=8)"
        );
        let err = Config::from_toml_str(
            "[search]\nband_min_source_rows = -1.0\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "config search.band_min_source_rows = -1 (expected 0..=4)"
        );
    }

    /// A value of the wrong type or beyond its type's range names its line and key, in words
    /// (before: "invalid type: string \"twenty\", expected u8", no key, no line).
    #[test]
    fn a_wrong_type_names_its_line_and_key_in_plain_words() {
        let cases = [
            (
                "[threshold]\nl_contrast_min = \"twenty\"\n",
                "c.toml: line 2: threshold.l_contrast_min: invalid type: string \"twenty\", expected a whole number from 0 to 255",
            ),
            (
                "[search]\nwindows = 9\n\n[tracking]\n# gap\nmax_gap_s = \"0.5\"\n",
                "c.toml: line 6: tracking.max_gap_s: invalid type: string \"0.5\", expected a number",
            ),
            (
                "[perspective]\nsrc = [[1, 2], [3, 4], [5, 6]]\n",
                "c.toml: line 2: perspective.src: invalid length 3, expected an array of length 4",
            ),
        ];
        for (text, want) in cases {
            let err =
                Config::from_toml_str_over(text, Path::new("c.toml"), Preset::Robust).unwrap_err();
            assert_eq!(err.to_string(), want);
        }
    }

    /// Every float in the default file (arrays element by element), set to nan, inf and
    /// -inf in turn: each is refused by name (regression: NaN passed `a >= b` range checks).
    #[test]
    fn nan_and_inf_in_any_float_key_are_refused_by_name() {
        let base: toml::Table = toml::from_str(&Config::default_toml()).unwrap();
        let mut tried = 0;
        for (section, t) in &base {
            let Some(t) = t.as_table() else { continue };
            for (key, v) in t {
                let n = match v {
                    toml::Value::Float(_) => 1,
                    toml::Value::Array(a) => a.len(),
                    _ => 0,
                };
                for idx in 0..n {
                    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                        let mut doc = base.clone();
                        let slot = doc[section].as_table_mut().unwrap().get_mut(key).unwrap();
                        let target = match slot {
                            toml::Value::Array(a) => &mut a[idx],
                            other => other,
                        };
                        match target {
                            toml::Value::Float(f) => *f = bad,
                            toml::Value::Array(inner) => {
                                inner[0] = toml::Value::Float(bad);
                            }
                            _ => continue,
                        }
                        tried += 1;
                        let text = toml::to_string(&doc).unwrap();
                        let err = Config::from_toml_str(&text, Path::new("c.toml"))
                            .expect_err(&format!("{section}.{key}[{idx}] = {bad} accepted"));
                        assert!(
                            err.to_string().contains(&format!("{section}.{key}")),
                            "{section}.{key}: {err}"
                        );
                    }
                }
            }
        }
        assert!(tried > 60, "{tried}");
    }

    #[test]
    fn perspective_quad_that_is_a_line_or_a_bow_tie_is_refused() {
        let line = "[perspective]\nsrc = [[100.0, 100.0], [200.0, 200.0], [300.0, 300.0], [400.0, 400.0]]\n";
        let err = Config::from_toml_str(line, Path::new("c.toml")).unwrap_err();
        assert!(
            err.to_string().starts_with("config perspective.src = "),
            "{err}"
        );
        assert!(err.to_string().contains("convex"), "{err}");
        // Bottom corners swapped: the quad crosses itself.
        let d = Config::default().perspective.src;
        let bow = format!(
            "[perspective]\nsrc = [[{}, {}], [{}, {}], [{}, {}], [{}, {}]]\n",
            d[0][0], d[0][1], d[1][0], d[1][1], d[3][0], d[3][1], d[2][0], d[2][1]
        );
        let err = Config::from_toml_str(&bow, Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("perspective.src"), "{err}");
    }

    #[test]
    fn a_quad_fits_a_frame_when_its_far_end_is_in_view_and_its_sides_mostly() {
        let quad = |src| PerspectiveConfig {
            src,
            ..PerspectiveConfig::default()
        };
        // The Udacity quad fits its 1280x720 frames, not 960x540 ones (its rows are below).
        let udacity = PerspectiveConfig::default();
        assert_eq!(udacity.corner_outside(1280, 720), None);
        assert_eq!(udacity.corner_outside(960, 540), Some([258.0, 682.0]));
        // Found in an off-centre 960x540 crop: the left line leaves the frame 3 px before the
        // bottom row; in view over 99% of its rows.
        let crop = quad([
            [252.9, 286.1],
            [391.5, 286.1],
            [-3.2, 513.0],
            [811.7, 513.0],
        ]);
        assert_eq!(crop.corner_outside(960, 540), None);
        // A side in view over 40% of its rows does not fit; the corner beyond the side is named.
        let far = quad([
            [252.9, 286.1],
            [391.5, 286.1],
            [-379.0, 513.0],
            [811.7, 513.0],
        ]);
        assert_eq!(far.corner_outside(960, 540), Some([-379.0, 513.0]));
        // A far end outside the frame does not fit, nor does a bottom row below it.
        let top = quad([
            [-1.0, 286.1],
            [391.5, 286.1],
            [100.0, 513.0],
            [811.7, 513.0],
        ]);
        assert_eq!(top.corner_outside(960, 540), Some([-1.0, 286.1]));
        let low = quad([
            [252.9, 286.1],
            [391.5, 286.1],
            [100.0, 540.0],
            [811.7, 540.0],
        ]);
        assert_eq!(low.corner_outside(960, 540), Some([100.0, 540.0]));
    }

    #[test]
    fn a_quad_found_on_frames_of_another_size_does_not_fit_them() {
        // The frame size is written and read back with the quad.
        let mut c = Config::default();
        c.perspective.frame = Some([960, 540]);
        let back = Config::from_toml_str(&c.to_toml(), Path::new("c.toml")).unwrap();
        assert_eq!(back.perspective.frame, Some([960, 540]));
        // A 960x540 quad lies inside 1280x720 frames, but it is in 960x540 pixels.
        let p = PerspectiveConfig {
            src: [
                [431.5, 340.4],
                [536.3, 340.4],
                [187.9, 513.0],
                [804.6, 513.0],
            ],
            frame: Some([960, 540]),
            ..PerspectiveConfig::default()
        };
        assert_eq!(p.corner_outside(1280, 720), None);
        assert_eq!(
            p.misfit(1280, 720, "the video's").as_deref(),
            Some("[perspective] was found on 960x540 frames, not the video's 1280x720 ones: its quad is in the pixels of that size, most likely of another camera")
        );
        assert_eq!(p.misfit(960, 540, "the"), None);
        // Without the size, only the corners are checked.
        let hand = PerspectiveConfig { frame: None, ..p };
        assert_eq!(hand.misfit(1280, 720, "the"), None);
        let udacity = PerspectiveConfig::default();
        assert!(udacity
            .misfit(960, 540, "the")
            .unwrap()
            .starts_with("perspective.src corner [258, 682] lies outside the 960x540 frames"));
        // A size no frame has is refused when the config is read.
        let err = Config::from_toml_str("[perspective]\nframe = [0, 540]\n", Path::new("c.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("perspective.frame"), "{err}");
    }

    #[test]
    fn partial_file_keeps_other_defaults() {
        let c = Config::from_toml_str("[threshold]\nl_min = 200\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.threshold.l_min, 200);
        assert_eq!(c.threshold.b_min, 190);
        assert_eq!(c.search, SearchConfig::default());
    }
}
