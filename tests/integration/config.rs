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
