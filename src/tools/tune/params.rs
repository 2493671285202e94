//! The tunable parameters: one table of keys with ranges, get/set on a `Config` by dotted key,
//! and the saved TOML that lists only the values that differ from the defaults.

use crate::base::config::{Config, ThresholdMethod};
use crate::base::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;

/// How a parameter is edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An integer with a slider and a number box.
    Int,
    /// A check box.
    Bool,
}

/// One tunable parameter: its dotted key, allowed range and a practical slider range.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ParamSpec {
    /// Dotted key as in the TOML file, e.g. `threshold.l_min`.
    pub key: &'static str,
    /// Section heading in the page.
    pub group: &'static str,
    pub kind: Kind,
    /// Allowed range (inclusive); values outside it are refused with a message.
    pub min: i64,
    pub max: i64,
    /// Upper end of the slider (the number box accepts up to `max`).
    pub slider_max: i64,
    /// What the value does, shown as a tooltip.
    pub help: &'static str,
    /// When the value acts; the page greys the control out, with the reason, otherwise.
    pub applies: Applies,
}

/// When a parameter acts on the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applies {
    Always,
    /// Under the default marking rule (local contrast) only.
    LocalContrast,
    /// Under the reference's rule (`threshold.global_max`) only.
    GlobalMax,
    /// With `threshold.sobel_enabled` only.
    Sobel,
    /// With `threshold.s_enabled` only.
    Saturation,
    /// On video frames searched around the previous fit; never on stills.
    Video,
}

impl Applies {
    /// Every variant, for the page's table of reasons.
    pub const ALL: [Applies; 6] = [
        Applies::Always,
        Applies::LocalContrast,
        Applies::GlobalMax,
        Applies::Sobel,
        Applies::Saturation,
        Applies::Video,
    ];

    /// The variant's name as serialised (`local_contrast`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Applies::Always => "always",
            Applies::LocalContrast => "local_contrast",
            Applies::GlobalMax => "global_max",
            Applies::Sobel => "sobel",
            Applies::Saturation => "saturation",
            Applies::Video => "video",
        }
    }

    /// What a parameter of this kind needs to act (shown when it does not).
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Applies::Always => None,
            Applies::LocalContrast => {
                Some("acts only under the default rule (local contrast): untick global_max")
            }
            Applies::GlobalMax => Some("acts only under the reference rule: tick global_max"),
            Applies::Sobel => Some("acts only with sobel_enabled ticked"),
            Applies::Saturation => Some("acts only with s_enabled ticked"),
            Applies::Video => Some(
                "acts on video frames only (the band around the previous fit); stills have none",
            ),
        }
    }

    /// What to change in a config file (or on the command line) so that it acts.
    pub fn config_fix(self) -> &'static str {
        match self {
            Applies::Always => "",
            Applies::LocalContrast => {
                "threshold.method = \"local_contrast\" (the default rule; the reference preset uses global_max)"
            }
            Applies::GlobalMax => {
                "threshold.method = \"global_max\" in the --config file, or --preset reference"
            }
            Applies::Sobel => "threshold.sobel_enabled = true in the --config file",
            Applies::Saturation => "threshold.s_enabled = true in the --config file",
            Applies::Video => "nothing: it acts on video frames searched around the previous fit",
        }
    }

    /// Whether a parameter of this kind acts under `cfg`.
    pub fn acts(self, cfg: &Config) -> bool {
        let global = cfg.threshold.method == ThresholdMethod::GlobalMax;
        match self {
            Applies::Always => true,
            Applies::LocalContrast => !global,
            Applies::GlobalMax => global,
            Applies::Sobel => cfg.threshold.sobel_enabled,
            Applies::Saturation => cfg.threshold.s_enabled,
            Applies::Video => false,
        }
    }

    /// Why a parameter does nothing under `cfg`, or `None` when it acts.
    pub fn inactive_reason(self, cfg: &Config) -> Option<&'static str> {
        if self.acts(cfg) {
            None
        } else {
            self.reason()
        }
    }
}

const fn int(
    key: &'static str,
    group: &'static str,
    min: i64,
    max: i64,
    slider_max: i64,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        group,
        kind: Kind::Int,
        min,
        max,
        slider_max,
        help,
        applies: Applies::Always,
    }
}

const fn flag(key: &'static str, group: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        key,
        group,
        kind: Kind::Bool,
        min: 0,
        max: 1,
        slider_max: 1,
        help,
        applies: Applies::Always,
    }
}

impl ParamSpec {
    /// The spec acting only `when`.
    const fn when(self, applies: Applies) -> Self {
        Self { applies, ..self }
    }
}

/// Every scalar parameter the tuner edits, in page order. The perspective source quad
/// (`perspective.src`, four `[x, y]` points) is edited separately by dragging.
pub const SPECS: &[ParamSpec] = &[
    flag(
        "threshold.global_max",
        "Marking rule",
        "the reference's rule: L and B scaled by their maxima, then the ranges below (off: local contrast)",
    ),
    int(
        "threshold.l_contrast_min",
        "Local contrast (default rule)",
        0,
        255,
        100,
        "white: L must beat the brighter side of the road by this much; default rule (local contrast) only",
    )
    .when(Applies::LocalContrast),
    int(
        "threshold.b_contrast_min",
        "Local contrast (default rule)",
        0,
        255,
        60,
        "yellow: B must beat the yellower side of the road by this much; default rule (local contrast) only",
    )
    .when(Applies::LocalContrast),
    int(
        "threshold.b_yellow_min",
        "Local contrast (default rule)",
        0,
        255,
        255,
        "yellow: B must be at least this (128 is grey); default rule (local contrast) only",
    )
    .when(Applies::LocalContrast),
    int(
        "threshold.marking_width_px",
        "Local contrast (default rule)",
        1,
        200,
        80,
        "widest marking, bird's-eye px: the road is sampled this far to each side; default rule (local contrast) only",
    )
    .when(Applies::LocalContrast),
    int(
        "threshold.min_run_px",
        "Local contrast (default rule)",
        0,
        200,
        40,
        "keep mask pixels on vertical runs of at least this many px; default rule (local contrast) only",
    )
    .when(Applies::LocalContrast),
    int(
        "threshold.l_min",
        "White (HLS L), reference rule",
        0,
        255,
        255,
        "keep pixels with scaled L in (l_min, l_max]; reference rule (global_max) only",
    )
    .when(Applies::GlobalMax),
    int(
        "threshold.l_max",
        "White (HLS L), reference rule",
        0,
        255,
        255,
        "upper bound of the L range; reference rule (global_max) only",
    )
    .when(Applies::GlobalMax),
    int(
        "threshold.b_min",
        "Yellow (LAB B), reference rule",
        0,
        255,
        255,
        "keep pixels with (scaled) B in (b_min, b_max]; reference rule (global_max) only",
    )
    .when(Applies::GlobalMax),
    int(
        "threshold.b_max",
        "Yellow (LAB B), reference rule",
        0,
        255,
        255,
        "upper bound of the B range; reference rule (global_max) only",
    )
    .when(Applies::GlobalMax),
    int(
        "threshold.b_scale_gate",
        "Yellow (LAB B), reference rule",
        0,
        255,
        255,
        "scale B to 255 only when its maximum is over this gate; reference rule (global_max) only",
    )
    .when(Applies::GlobalMax),
    flag(
        "threshold.sobel_enabled",
        "Gradient (Sobel x on L)",
        "add pixels whose scaled |Sobel x| is in range",
    ),
    int(
        "threshold.sobel_min",
        "Gradient (Sobel x on L)",
        0,
        255,
        255,
        "lower bound of scaled |Sobel x|; with sobel_enabled only",
    )
    .when(Applies::Sobel),
    int(
        "threshold.sobel_max",
        "Gradient (Sobel x on L)",
        0,
        255,
        255,
        "upper bound of scaled |Sobel x|; with sobel_enabled only",
    )
    .when(Applies::Sobel),
    flag(
        "threshold.s_enabled",
        "Saturation (HLS S)",
        "add pixels whose HLS S is in range",
    ),
    int(
        "threshold.s_min",
        "Saturation (HLS S)",
        0,
        255,
        255,
        "lower bound of S; with s_enabled only",
    )
    .when(Applies::Saturation),
    int(
        "threshold.s_max",
        "Saturation (HLS S)",
        0,
        255,
        255,
        "upper bound of S; with s_enabled only",
    )
    .when(Applies::Saturation),
    int(
        "search.windows",
        "Search",
        1,
        50,
        30,
        "sliding windows stacked over the image height",
    ),
    int(
        "search.margin",
        "Search",
        1,
        1000,
        300,
        "half-width of a sliding window, px",
    ),
    int(
        "search.min_pixels",
        "Search",
        0,
        100_000,
        1000,
        "a window re-centres when it holds more than this many pixels",
    ),
    int(
        "search.prior_margin",
        "Search",
        1,
        1000,
        300,
        "half-width of the band around the previous fit (video), px",
    )
    .when(Applies::Video),
    int(
        "search.min_rows",
        "Search",
        3,
        10_000,
        200,
        "a line with pixels on fewer rows is not found",
    ),
];

/// The key of the perspective source quad.
pub const PERSPECTIVE_SRC: &str = "perspective.src";

/// The spec of a scalar key.
pub fn spec(key: &str) -> Option<&'static ParamSpec> {
    SPECS.iter().find(|s| s.key == key)
}

/// The error for a key that is not tunable; lists the keys that are.
pub fn unknown(key: &str) -> Error {
    let known: Vec<&str> = SPECS
        .iter()
        .map(|s| s.key)
        .chain(std::iter::once(PERSPECTIVE_SRC))
        .collect();
    Error::Invalid(format!(
        "unknown parameter `{key}` (tunable: {})",
        known.join(", ")
    ))
}

fn bad(key: &str, value: impl std::fmt::Display, expected: impl std::fmt::Display) -> Error {
    Error::ConfigValue {
        key: key.to_string(),
        value: value.to_string(),
        expected: format!("expected {expected}"),
    }
}

/// The current value of a parameter as JSON (`perspective.src` as `[[x, y]; 4]`).
pub fn get_param(cfg: &Config, key: &str) -> Result<Value> {
    let t = &cfg.threshold;
    let s = &cfg.search;
    let v = match key {
        "threshold.global_max" => Value::from(t.method == ThresholdMethod::GlobalMax),
        "threshold.l_contrast_min" => Value::from(t.l_contrast_min),
        "threshold.b_contrast_min" => Value::from(t.b_contrast_min),
        "threshold.b_yellow_min" => Value::from(t.b_yellow_min),
        "threshold.marking_width_px" => Value::from(t.marking_width_px),
        "threshold.min_run_px" => Value::from(t.min_run_px),
        "threshold.l_min" => Value::from(t.l_min),
        "threshold.l_max" => Value::from(t.l_max),
        "threshold.b_min" => Value::from(t.b_min),
        "threshold.b_max" => Value::from(t.b_max),
        "threshold.b_scale_gate" => Value::from(t.b_scale_gate),
        "threshold.sobel_enabled" => Value::from(t.sobel_enabled),
        "threshold.sobel_min" => Value::from(t.sobel_min),
        "threshold.sobel_max" => Value::from(t.sobel_max),
        "threshold.s_enabled" => Value::from(t.s_enabled),
        "threshold.s_min" => Value::from(t.s_min),
        "threshold.s_max" => Value::from(t.s_max),
        "search.windows" => Value::from(s.windows),
        "search.margin" => Value::from(s.margin),
        "search.min_pixels" => Value::from(s.min_pixels),
        "search.prior_margin" => Value::from(s.prior_margin),
        "search.min_rows" => Value::from(s.min_rows),
        PERSPECTIVE_SRC => {
            serde_json::to_value(cfg.perspective.src).map_err(|e| Error::Invalid(e.to_string()))?
        }
        _ => return Err(unknown(key)),
    };
    Ok(v)
}

/// All tunable parameters of a config as a JSON object keyed by dotted key.
pub fn params_of(cfg: &Config) -> Result<serde_json::Map<String, Value>> {
    let mut m = serde_json::Map::new();
    for s in SPECS {
        m.insert(s.key.to_string(), get_param(cfg, s.key)?);
    }
    m.insert(
        PERSPECTIVE_SRC.to_string(),
        get_param(cfg, PERSPECTIVE_SRC)?,
    );
    Ok(m)
}

fn int_value(spec: &ParamSpec, v: &Value) -> Result<i64> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        Value::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    };
    let Some(n) = n.filter(|n| n.is_finite()) else {
        return Err(bad(
            spec.key,
            v,
            format!("an integer in {}..={}", spec.min, spec.max),
        ));
    };
    if n.fract() != 0.0 || n < spec.min as f64 || n > spec.max as f64 {
        return Err(bad(
            spec.key,
            n,
            format!("an integer in {}..={}", spec.min, spec.max),
        ));
    }
    Ok(n as i64)
}

fn bool_value(key: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(false),
        Value::Number(n) if n.as_f64() == Some(1.0) => Ok(true),
        Value::String(s) if s == "true" || s == "1" => Ok(true),
        Value::String(s) if s == "false" || s == "0" => Ok(false),
        _ => Err(bad(key, v, "true or false")),
    }
}

fn quad_value(v: &Value) -> Result<[[f64; 2]; 4]> {
    let q: [[f64; 2]; 4] = serde_json::from_value(v.clone())
        .map_err(|_| bad(PERSPECTIVE_SRC, v, "four [x, y] points (tl, tr, bl, br)"))?;
    for (i, p) in q.iter().enumerate() {
        if !(p[0].is_finite()
            && p[1].is_finite()
            && p[0].abs() <= 100_000.0
            && p[1].abs() <= 100_000.0)
        {
            return Err(bad(
                &format!("{PERSPECTIVE_SRC}[{i}]"),
                format!("[{}, {}]", p[0], p[1]),
                "finite pixel coordinates",
            ));
        }
    }
    Ok(q)
}

/// Set one parameter from JSON. The value must be in the key's own range; cross-field rules
/// (`l_min < l_max`, ...) are left to `Config::validate`, which callers run afterwards.
pub fn set_param(cfg: &mut Config, key: &str, v: &Value) -> Result<()> {
    if key == PERSPECTIVE_SRC {
        cfg.perspective.src = quad_value(v)?;
        return Ok(());
    }
    let spec = spec(key).ok_or_else(|| unknown(key))?;
    if spec.kind == Kind::Bool {
        let b = bool_value(key, v)?;
        match key {
            "threshold.global_max" => {
                cfg.threshold.method = if b {
                    ThresholdMethod::GlobalMax
                } else {
                    ThresholdMethod::LocalContrast
                }
            }
            "threshold.sobel_enabled" => cfg.threshold.sobel_enabled = b,
            "threshold.s_enabled" => cfg.threshold.s_enabled = b,
            _ => return Err(unknown(key)),
        }
        return Ok(());
    }
    let n = int_value(spec, v)?;
    // The spec's range fits the field's type, so these casts cannot truncate.
    let (t, s) = (&mut cfg.threshold, &mut cfg.search);
    match key {
        "threshold.l_contrast_min" => t.l_contrast_min = n as u8,
        "threshold.b_contrast_min" => t.b_contrast_min = n as u8,
        "threshold.b_yellow_min" => t.b_yellow_min = n as u8,
        "threshold.marking_width_px" => t.marking_width_px = n as u32,
        "threshold.min_run_px" => t.min_run_px = n as u32,
        "threshold.l_min" => t.l_min = n as u8,
        "threshold.l_max" => t.l_max = n as u8,
        "threshold.b_min" => t.b_min = n as u8,
        "threshold.b_max" => t.b_max = n as u8,
        "threshold.b_scale_gate" => t.b_scale_gate = n as u8,
        "threshold.sobel_min" => t.sobel_min = n as u8,
        "threshold.sobel_max" => t.sobel_max = n as u8,
        "threshold.s_min" => t.s_min = n as u8,
        "threshold.s_max" => t.s_max = n as u8,
        "search.windows" => s.windows = n as u32,
        "search.margin" => s.margin = n as u32,
        "search.min_pixels" => s.min_pixels = n as u32,
        "search.prior_margin" => s.prior_margin = n as u32,
        "search.min_rows" => s.min_rows = n as u32,
        _ => return Err(unknown(key)),
    }
    Ok(())
}

/// `base` with every parameter of `params` applied, then validated.
pub fn apply_params(base: &Config, params: &serde_json::Map<String, Value>) -> Result<Config> {
    let mut cfg = base.clone();
    for (k, v) in params {
        set_param(&mut cfg, k, v)?;
    }
    cfg.validate()?;
    Ok(cfg)
}

/// The sections of the geometry, written whole by [`toml_diff`].
const GEOMETRY_SECTIONS: [&str; 2] = ["perspective", "units"];

/// The config as TOML listing the values that differ from the defaults, and the geometry
/// ([`GEOMETRY_SECTIONS`]) whole, under a comment header. Loading it gives back `cfg`
/// exactly.
pub fn toml_diff(cfg: &Config, header: &str) -> Result<String> {
    let to_table = |c: &Config| -> Result<toml::Table> {
        toml::Table::try_from(c)
            .map_err(|e| Error::Invalid(format!("cannot serialize config: {e}")))
    };
    let (ours, defaults) = (to_table(cfg)?, to_table(&Config::default())?);
    // Sections and keys in the order of the default file; keys it leaves out (an optional
    // one that is set, as `perspective.view`) after the others of their section.
    let default_text =
        toml::to_string(&Config::default()).map_err(|e| Error::Invalid(e.to_string()))?;
    let mut order: Vec<(String, Vec<String>)> = Vec::new();
    for line in default_text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            order.push((name.to_string(), Vec::new()));
        } else if let (Some((key, _)), Some(last)) = (line.split_once(" = "), order.last_mut()) {
            last.1.push(key.to_string());
        }
    }
    let mut out = String::new();
    for line in header.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    for (section, mut keys) in order {
        let Some(table) = ours.get(&section).and_then(|v| v.as_table()) else {
            continue;
        };
        keys.extend(
            table
                .keys()
                .filter(|k| !keys.contains(k))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let d = defaults.get(&section).and_then(|d| d.as_table());
        // The geometry tuned on is written whole, defaults or not: a config that names
        // `[perspective]` keeps it fixed, one that does not has `lanes video` find its own.
        let whole = GEOMETRY_SECTIONS.contains(&section.as_str());
        let lines: Vec<String> = keys
            .iter()
            .filter_map(|k| table.get(k).map(|v| (k, v)))
            .filter(|(k, v)| whole || d.and_then(|d| d.get(*k)) != Some(*v))
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect();
        if !lines.is_empty() {
            out.push_str(&format!("\n[{section}]\n"));
            out.extend(lines);
        }
    }
    let back = Config::from_toml_str(&out, std::path::Path::new("saved config"))?;
    if &back != cfg {
        return Err(Error::Invalid(
            "saved config does not load back to the tuned values".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_spec_round_trips_through_get_and_set() {
        let mut cfg = Config::default();
        for s in SPECS {
            let v = get_param(&cfg, s.key).unwrap();
            set_param(&mut cfg, s.key, &v).unwrap();
        }
        assert_eq!(cfg, Config::default());
        // and setting changes exactly the named field
        set_param(&mut cfg, "search.margin", &json!(120)).unwrap();
        assert_eq!(cfg.search.margin, 120);
        set_param(&mut cfg, "threshold.s_enabled", &json!(true)).unwrap();
        assert!(cfg.threshold.s_enabled);
    }

    #[test]
    fn out_of_range_value_names_key_value_and_range() {
        let mut cfg = Config::default();
        let e = set_param(&mut cfg, "threshold.l_min", &json!(300)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config threshold.l_min = 300 (expected an integer in 0..=255)"
        );
        let e = set_param(&mut cfg, "search.windows", &json!(2.5)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config search.windows = 2.5 (expected an integer in 1..=50)"
        );
        let e = set_param(&mut cfg, "search.windowz", &json!(3)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown parameter `search.windowz`"),
            "{e}"
        );
    }

    #[test]
    fn cross_field_rule_is_left_to_validate() {
        let mut p = serde_json::Map::new();
        p.insert("threshold.l_min".into(), json!(255));
        let e = apply_params(&Config::default(), &p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config threshold.l_min = 255 (expected less than threshold.l_max = 255)"
        );
    }

    /// Values that differ from the defaults, and the geometry whole: a config saved from the
    /// Udacity stills keeps its `[perspective]`, so `lanes video` uses it rather than finding
    /// its own (before, a geometry equal to the defaults was left out, and with it the section).
    #[test]
    fn diff_lists_changed_values_and_the_geometry_and_loads_back() {
        let mut cfg = Config::default();
        cfg.threshold.l_min = 200;
        cfg.search.windows = 12;
        cfg.perspective.src[0] = [570.0, 465.0];
        let text = toml_diff(&cfg, "written by a test").unwrap();
        assert_eq!(
            text,
            "# written by a test\n\n[threshold]\nl_min = 200\n\n[perspective]\nsrc = [[570.0, 465.0], [707.0, 464.0], [258.0, 682.0], [1049.0, 682.0]]\ndst = [[450.0, 0.0], [830.0, 0.0], [450.0, 720.0], [830.0, 720.0]]\nbirdseye_scale_x = 1.0\nbirdseye_scale_y = 0.5\n\n[search]\nwindows = 12\n\n[units]\nxm_per_px = 0.009788359788359789\nym_per_px = 0.03048\n"
        );
        let defaults = toml_diff(&Config::default(), "h").unwrap();
        assert!(defaults.contains("\n[perspective]\n") && defaults.contains("\n[units]\n"));
        assert!(!defaults.contains("[threshold]"), "{defaults}");
        let t: toml::Table = toml::from_str(&defaults).unwrap();
        assert!(t.contains_key("perspective"));
    }
}
