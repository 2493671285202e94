//! Integration tests: `lanes config`.

use super::*;

#[test]
fn print_default_round_trips_through_check() {
    let o = lanes(&["config", "--print-default"]);
    assert!(o.status.success());
    let dir = tmp();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, stdout(&o)).unwrap();
    let o2 = lanes(&["config", "--check", p.to_str().unwrap()]);
    assert!(o2.status.success(), "{}", stderr(&o2));
    assert!(stdout(&o2).contains("l_min = 220"));
}

#[test]
fn out_of_range_value_is_a_one_line_error_naming_key_and_value() {
    let dir = tmp();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "[search]\nwindows = 0\n").unwrap();
    let o = lanes(&["config", "--check", p.to_str().unwrap()]);
    assert_one_line_error(&o, "search.windows = 0");
}

/// Issue 24: `--preset` was offered by calibrate, undistort, perspective and config, where it
/// did nothing. It is gone from the first three and acts on `lanes config`; commands that write
/// no video refuse libx264's speed presets by name.
#[test]
fn preset_is_offered_only_where_it_acts() {
    let o = lanes(&["config", "--print-default", "--preset", "reference"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = stdout(&o);
    assert!(
        reference.contains("method = \"global_max\"") && reference.contains("method = \"average\""),
        "{reference}"
    );
    let robust = stdout(&lanes(&["config", "--print-default"]));
    assert!(robust.contains("method = \"local_contrast\"") && !robust.contains("global_max"));
    // --check fills a file's missing keys from the preset.
    let dir = tmp();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, "[search]\nwindows = 12\n").unwrap();
    let o = lanes(&[
        "config",
        "--check",
        p.to_str().unwrap(),
        "--preset",
        "reference",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("windows = 12") && stdout(&o).contains("global_max"));
    for cmd in [
        &["calibrate", "x", "--board", "9x6", "-o", "c.yml"][..],
        &["undistort", "--camera", "c.yml", "x.jpg", "-o", "d"][..],
        &["perspective", "x.jpg", "-o", "p.toml"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--preset", "reference"]);
        let o = lanes(&args);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert!(
            stderr(&o).contains("unexpected argument '--preset'"),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
    let o = lanes(&["image", "x.jpg", "-o", "d", "--preset", "slow"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("\"slow\" is libx264's speed preset, for the commands that write videos"),
        "{}",
        stderr(&o)
    );
}
