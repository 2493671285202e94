//! Lane events found in a drive's telemetry: lane lost, lane change, lane departure warning and
//! tight bend. Pure functions over `&[FrameRecord]` and the frame rate; thresholds in
//! `config::EventsConfig`.
//!
//! # Definitions
//! Every event covers the frames `start_frame..=end_frame`; `start_s` is the first frame's
//! time and `end_s` the last frame's time plus one frame period, so `duration_s` is the number
//! of frames over the frame rate. Only frames present in the records count (a dropped line of
//! a telemetry file is a gap). The offset is positive when the vehicle is right of the lane
//! centre (`measure.rs`).
//! - **lane_lost**: a run of `none` frames at least `lost_min_s` long. `predicted` frames do
//!   not count as lost: the tracker still draws a lane it believes in (the gap it bridges is at
//!   most `tracking.max_gap_s`). A `none` run inside a lane change's gap belongs to the change.
//! - **lane_change**: two consecutive frames with a lane (an offset and a lane width), at most
//!   `lane_change_max_gap_s` apart, whose offsets have opposite signs and differ by
//!   `lane_change_min_jump..=lane_change_max_jump` lane widths: the tracker now follows the
//!   neighbouring lane. The offset falls (right of the old centre to left of the new one) on a
//!   change to the right. The change starts where the car's centre is over the line: the first
//!   of the frames before the jump whose offset (measured, or predicted by the tracker while
//!   the lines are hard to see) is past `lane_width / 2` towards the change; it ends with the
//!   last frame before the new lane (or is the first frame in the new lane alone).
//! - **lane_departure**: the car's outer edge (`car_width_m / 2` from the camera) is more than
//!   `departure_margin_m` past a line (the line's centre is `lane_width / 2` from the lane
//!   centre) on consecutive frames with a lane for at least `departure_min_s`, and the run is
//!   not part of a lane change: it does not end within `lane_change_grace_s` before a change to
//!   the same side, nor start within that time after a change from that side. Reported at the
//!   warning (the run's first frame): `lateral_speed_mps` towards the line (least-squares slope
//!   of the offset over the `lateral_speed_window_s` before it) and `tlc_s`, the time until the
//!   car's centre reaches the line at that speed (the edge has already crossed it by the
//!   margin; `None` when the car is not moving towards the line).
//! - **tight_bend**: a run of frames with both lines whose tracked radius is below
//!   `tight_radius_m` for at least `tight_min_s`; its direction from the sign of the drawn
//!   fits' curvature. A radius from one line or a prediction starts and extends no bend (it is
//!   not checked against a second line; in a lane change the car's yaw bends one line's fit),
//!   nor does a radius read from a lane change's first frame to `lane_change_grace_s` after its
//!   last (the lane the track moved to is fitted from its first frames while the car turns).
//!   Runs of the same direction less than `tight_merge_gap_s` apart (from the end of one to
//!   the start of the next: a frame or two whose radius crossed the threshold) are one bend,
//!   and the merged bend's length is what must reach `tight_min_s`.
//!
//! `kinds`: the event values and their file; `detect`: the definitions above as functions.

mod detect;
mod kinds;

pub use detect::{detect, fps_of, signed_curvature_per_m};
pub use kinds::{count_by_kind, write_json, Detail, Event, Side, KINDS};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::base::config::EventsConfig;

    use crate::base::telemetry::FrameRecord;

    use crate::lane::fit::Poly2;

    const FPS: f64 = 25.0;

    /// A record with a lane at `offset` (3.6 m wide), radius 1000 m, bending left.
    fn rec(frame: usize, offset: Option<f64>) -> FrameRecord {
        FrameRecord::sample(frame, offset, 1000.0)
    }

    fn drive(offsets: impl Fn(usize) -> Option<f64>, n: usize) -> Vec<FrameRecord> {
        (0..n).map(|f| rec(f, offsets(f))).collect()
    }

    fn kinds(ev: &[Event]) -> Vec<&'static str> {
        ev.iter().map(|e| e.kind()).collect()
    }

    #[test]
    fn a_steady_drive_has_no_event() {
        let rs = drive(|f| Some(0.2 * (f as f64 / 30.0).sin()), 500);
        assert!(detect(&rs, FPS, &EventsConfig::default()).is_empty());
        assert!((fps_of(&rs, 1.0) - 25.0).abs() < 1e-9);
    }

    #[test]
    fn lane_lost_needs_half_a_second_of_none_and_predicted_is_not_lost() {
        // 12 frames (0.48 s) of none: no event; 13 frames (0.52 s): one, exact frames.
        let mut rs = drive(
            |f| {
                if (100..112).contains(&f) || (200..213).contains(&f) {
                    None
                } else {
                    Some(0.0)
                }
            },
            300,
        );
        // 30 frames predicted: a lane is drawn, not lost.
        for r in &mut rs[250..280] {
            r.status = "predicted".into();
        }
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_lost"]);
        let e = &ev[0];
        assert_eq!((e.start_frame, e.end_frame), (200, 212));
        assert!((e.start_s - 8.0).abs() < 1e-9);
        assert!((e.duration_s - 0.52).abs() < 1e-9);
        assert!((e.end_s - 8.52).abs() < 1e-9);
        assert_eq!(e.detail, Detail::LaneLost { frames: 13 });
    }

    /// Offset of a car that moves right by one lane (3.6 m) between frames 100 and 175 at
    /// constant speed, seen in the lane it is in.
    fn change_right(f: usize) -> f64 {
        let d = 3.6 * ((f as f64 - 100.0) / 75.0).clamp(0.0, 1.0);
        let o = d;
        if o > 1.8 {
            o - 3.6
        } else {
            o
        }
    }

    #[test]
    fn a_lane_change_is_one_event_without_departure_warnings() {
        let rs = drive(|f| Some(change_right(f)), 300);
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_change"], "{ev:#?}");
        let e = &ev[0];
        // The centre crosses the line at d = 1.8 m: frame 137.5.
        assert_eq!(e.start_frame, 138);
        assert!(matches!(
            e.detail,
            Detail::LaneChange {
                direction: Side::Right,
                ..
            }
        ));
        // The tracker predicts past the line (the centre crosses at frame 137.5) before it
        // finds the new lane at frame 150: the change starts at the crossing.
        let rs = drive(
            |f| {
                Some(if f < 150 {
                    3.6 * ((f as f64 - 100.0) / 75.0).clamp(0.0, 1.0)
                } else {
                    change_right(f)
                })
            },
            300,
        );
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_change"], "{ev:#?}");
        assert_eq!((ev[0].start_frame, ev[0].end_frame), (138, 149));
        // Back to the left: mirrored.
        let rs = drive(|f| Some(-change_right(f)), 300);
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].side(), Some(Side::Left));
    }

    /// Radii read while the car crosses a line and in the `lane_change_grace_s` after it
    /// (the new lane fitted from its first frames while the car still turns) are no bend; a
    /// tight radius that goes on past the grace is one, from where the grace ends.
    #[test]
    fn a_bend_read_in_a_lane_change_is_no_bend_until_the_grace_is_over() {
        // The change crosses at frame 138 (25 fps, grace 1 s: up to frame 163).
        let mut rs = drive(|f| Some(change_right(f)), 300);
        for r in &mut rs[138..160] {
            r.radius_m = Some(80.0);
        }
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_change"], "{ev:#?}");
        for r in &mut rs[138..200] {
            r.radius_m = Some(80.0);
        }
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_change", "tight_bend"], "{ev:#?}");
        assert_eq!((ev[1].start_frame, ev[1].end_frame), (164, 199));
        // With no grace, the bend starts at the crossing.
        let cfg = EventsConfig {
            lane_change_grace_s: 0.0,
            ..EventsConfig::default()
        };
        let ev = detect(&rs, FPS, &cfg);
        assert_eq!(
            ev.iter()
                .find(|e| e.kind() == "tight_bend")
                .map(|e| e.start_frame),
            Some(139)
        );
    }

    #[test]
    fn a_lane_change_across_a_gap_swallows_the_gap() {
        // Lines lost for 0.8 s around the crossing: one change, no lane_lost.
        let rs = drive(|f| (!(128..148).contains(&f)).then(|| change_right(f)), 300);
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_change"], "{ev:#?}");
        assert_eq!((ev[0].start_frame, ev[0].end_frame), (128, 147));
        // A gap longer than lane_change_max_gap_s (1.5 s) is a loss, not a change.
        let rs = drive(|f| (!(110..160).contains(&f)).then(|| change_right(f)), 300);
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert!(kinds(&ev).contains(&"lane_lost"), "{ev:#?}");
        assert!(!kinds(&ev).contains(&"lane_change"), "{ev:#?}");
    }

    #[test]
    fn a_drift_over_the_line_is_a_departure_with_speed_and_tlc() {
        // Ramp right at 0.5 m/s from frame 50 to 1.25 m, hold, then back.
        let o = |f: usize| {
            let t = f as f64 / FPS;
            let up = (0.5 * (t - 2.0)).clamp(0.0, 1.25);
            let down = (0.5 * (t - 8.0)).clamp(0.0, 1.25);
            Some(up - down)
        };
        let rs = drive(o, 400);
        let cfg = EventsConfig::default();
        let ev = detect(&rs, FPS, &cfg);
        assert_eq!(kinds(&ev), vec!["lane_departure"], "{ev:#?}");
        let e = &ev[0];
        // Edge past the line by 0.1 m: offset > 1.8 - 0.9 + 0.1 = 1.0 m, at t = 4.0 s (frame
        // 100 has exactly 1.0; the first frame over it is 101); back under at t = 8.5 s.
        assert_eq!(e.start_frame, 101);
        assert_eq!(e.end_frame, 212);
        let Detail::LaneDeparture {
            side,
            max_excess_m,
            lateral_speed_mps,
            tlc_s,
            ..
        } = e.detail
        else {
            panic!()
        };
        assert_eq!(side, Side::Right);
        assert!((max_excess_m - 0.35).abs() < 1e-9);
        assert!((lateral_speed_mps.unwrap() - 0.5).abs() < 1e-9);
        // Centre at 1.02 m, line at 1.8 m: 0.78 m at 0.5 m/s.
        assert!((tlc_s.unwrap() - 1.56).abs() < 1e-9);
        // Too short: 7 frames over the margin (0.28 s) is not a warning.
        let short = drive(|f| Some(if (10..17).contains(&f) { -1.2 } else { 0.0 }), 60);
        assert!(detect(&short, FPS, &cfg).is_empty());
        let long = drive(|f| Some(if (10..18).contains(&f) { -1.2 } else { 0.0 }), 60);
        let ev = detect(&long, FPS, &cfg);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].side(), Some(Side::Left));
        assert_eq!(ev[0].detail.clone(), ev[0].detail);
    }

    #[test]
    fn tight_bends_have_a_direction_and_a_minimum() {
        let mut rs = drive(|_| Some(0.0), 200);
        for (k, r) in rs[50..80].iter_mut().enumerate() {
            r.radius_m = Some(240.0 - k as f64);
            r.left_fit = Some(Poly2::from([3e-4, 0.0, 450.0]));
            r.right_fit = Some(Poly2::from([3e-4, 0.0, 830.0]));
        }
        for r in &mut rs[120..130] {
            r.radius_m = Some(200.0);
        }
        // A long run of tight radii from one line or a prediction (a lane change) is no bend.
        for (k, r) in rs[150..190].iter_mut().enumerate() {
            r.radius_m = Some(120.0);
            r.status = if k < 20 { "left_only" } else { "predicted" }.into();
        }
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["tight_bend"]);
        assert_eq!((ev[0].start_frame, ev[0].end_frame), (50, 79));
        assert_eq!(
            ev[0].detail,
            Detail::TightBend {
                direction: Side::Right,
                min_radius_m: 211.0
            }
        );
        assert!(signed_curvature_per_m(&rs[60]).unwrap() < 0.0);
        assert!((signed_curvature_per_m(&rs[0]).unwrap() - 1e-3).abs() < 1e-12);
    }

    /// The drive: tight 9.77-11.93 s and 12.00-13.00 s at 25 fps (one frame of 273 m
    /// between) were two events; they are one bend, unless the gap is 0.5 s or more or the
    /// bend changes direction.
    #[test]
    fn back_to_back_tight_bends_are_merged_below_the_gap() {
        let bend = |rs: &mut [FrameRecord], a: usize, b: usize, sign: f64| {
            for r in &mut rs[a..b] {
                r.radius_m = Some(200.0);
                r.left_fit = Some(Poly2::from([sign * 3e-4, 0.0, 450.0]));
                r.right_fit = Some(Poly2::from([sign * 3e-4, 0.0, 830.0]));
            }
        };
        // Frames 244..=298 (9.76-11.96 s) and 300..=324 (12.00-13.00 s); frame 299 at 273 m.
        let mut rs = drive(|_| Some(0.0), 400);
        bend(&mut rs, 244, 299, 1.0);
        rs[299].radius_m = Some(273.0);
        bend(&mut rs, 300, 325, 1.0);
        let cfg = EventsConfig::default();
        let ev = detect(&rs, FPS, &cfg);
        assert_eq!(kinds(&ev), vec!["tight_bend"], "{ev:?}");
        assert_eq!((ev[0].start_frame, ev[0].end_frame), (244, 324));
        assert!((ev[0].start_s - 9.76).abs() < 1e-9 && (ev[0].end_s - 13.0).abs() < 1e-9);
        assert_eq!(
            ev[0].detail,
            Detail::TightBend {
                direction: Side::Right,
                min_radius_m: 200.0
            }
        );
        // tight_merge_gap_s = 0 keeps the two.
        let apart = EventsConfig {
            tight_merge_gap_s: 0.0,
            ..cfg
        };
        assert_eq!(detect(&rs, FPS, &apart).len(), 2);
        // A gap of 0.52 s (13 frames) is not bridged.
        let mut rs = drive(|_| Some(0.0), 400);
        bend(&mut rs, 244, 299, 1.0);
        bend(&mut rs, 312, 337, 1.0);
        assert_eq!(detect(&rs, FPS, &cfg).len(), 2);
        // Two short runs (0.32 s each) 0.08 s apart are one bend of 0.72 s.
        let mut rs = drive(|_| Some(0.0), 200);
        bend(&mut rs, 50, 58, 1.0);
        bend(&mut rs, 60, 68, 1.0);
        let ev = detect(&rs, FPS, &cfg);
        assert_eq!(ev.len(), 1);
        assert!((ev[0].duration_s - 0.72).abs() < 1e-9);
        // An S-bend (right then left) stays two bends.
        let mut rs = drive(|_| Some(0.0), 400);
        bend(&mut rs, 244, 299, 1.0);
        bend(&mut rs, 300, 325, -1.0);
        let ev = detect(&rs, FPS, &cfg);
        assert_eq!(ev.len(), 2);
        assert_eq!(
            (ev[0].side(), ev[1].side()),
            (Some(Side::Right), Some(Side::Left))
        );
    }

    #[test]
    fn events_serialize_with_a_snake_case_kind_and_round_trip() {
        let rs = drive(|f| Some(change_right(f)), 300);
        let ev = detect(&rs, FPS, &EventsConfig::default());
        let text = serde_json::to_string(&ev).unwrap();
        assert!(text.contains("\"kind\":\"lane_change\""), "{text}");
        assert!(text.contains("\"direction\":\"right\""), "{text}");
        let back: Vec<Event> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, ev);
        assert_eq!(count_by_kind(&ev)[1], ("lane_change", 1));
    }

    #[test]
    fn missing_records_count_as_gaps_and_odd_input_does_not_panic() {
        assert!(detect(&[], FPS, &EventsConfig::default()).is_empty());
        let rs = drive(|_| None, 3);
        assert!(detect(&rs, 0.0, &EventsConfig::default()).is_empty());
        assert_eq!(fps_of(&rs[..1], 30.0), 30.0);
        // Frames 0..10 and 30..40 with lanes, none in between recorded: no lost span is
        // invented from absent records, and the duration of a none run uses frame numbers.
        let mut rs: Vec<FrameRecord> = (0..10).chain(30..40).map(|f| rec(f, Some(0.0))).collect();
        rs.insert(10, rec(12, None));
        rs.insert(11, rec(25, None));
        let ev = detect(&rs, FPS, &EventsConfig::default());
        assert_eq!(kinds(&ev), vec!["lane_lost"]);
        assert!((ev[0].duration_s - 14.0 / FPS).abs() < 1e-9);
    }
}
