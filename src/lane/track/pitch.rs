//! The camera's pitch relative to the road, followed over frames: a scalar Kalman filter (a
//! random walk) on the change from the geometry's own pitch, fed by the pitch each frame's two
//! lines imply (`horizon::Horizon::observe`). Observations beyond three standard deviations
//! of the prediction are set aside (a lane that widens, a wrong pair), unless they persist for
//! a second (the pitch did change: the filter starts again from them); the change is bounded
//! by `tracking.pitch_max_change_deg`.

use super::lane::frame_rate;
use crate::base::config::TrackingConfig;

/// The filter's uncertainty at the start and after a restart: the geometry's pitch is taken
/// as right within about a degree.
const START_SD_DEG: f64 = 1.0;

/// Follows the pitch (radians, downward) over the frames of a video.
#[derive(Debug, Clone)]
pub struct PitchTracker {
    base: f64,
    max_change: f64,
    /// Process variance per frame, observation variance (radians^2).
    q: f64,
    r: f64,
    /// The change from `base` and its variance.
    x: f64,
    p: f64,
    /// Consecutive observations set aside, and how many make a restart.
    set_aside: usize,
    restart_after: usize,
}

impl PitchTracker {
    /// A filter around the geometry's own pitch `base` (radians) for a video of `fps` frames
    /// per second (25 when unknown).
    pub fn new(cfg: &TrackingConfig, base: f64, fps: f64) -> Self {
        let fps = frame_rate(fps);
        let q = cfg.pitch_noise_deg_s.to_radians().powi(2) / fps;
        Self {
            base,
            max_change: cfg.pitch_max_change_deg.to_radians(),
            q,
            r: cfg.pitch_observation_deg.to_radians().powi(2),
            x: 0.0,
            p: START_SD_DEG.to_radians().powi(2),
            set_aside: 0,
            restart_after: fps.round() as usize,
        }
    }

    /// The pitch (radians, downward) as of the last frame.
    pub fn pitch(&self) -> f64 {
        self.base + self.x
    }

    /// This frame's pitch (radians, downward), given the pitch its lines imply, if any.
    pub fn update(&mut self, observed: Option<f64>) -> f64 {
        self.p += self.q;
        if let Some(z) = observed.filter(|z| z.is_finite()) {
            let innov = z - self.base - self.x;
            let s = self.p + self.r;
            if innov * innov <= 9.0 * s {
                let k = self.p / s;
                self.x += k * innov;
                self.p *= 1.0 - k;
                self.set_aside = 0;
            } else {
                self.set_aside += 1;
                if self.set_aside >= self.restart_after {
                    self.x = z - self.base;
                    self.p = START_SD_DEG.to_radians().powi(2);
                    self.set_aside = 0;
                }
            }
            self.x = self.x.clamp(-self.max_change, self.max_change);
        }
        self.base + self.x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deg(v: f64) -> f64 {
        v.to_radians()
    }

    #[test]
    fn follows_a_step_smooths_noise_and_stays_within_its_bound() {
        let cfg = TrackingConfig::default();
        let mut t = PitchTracker::new(&cfg, deg(2.0), 25.0);
        // Noisy observations of the geometry's own pitch: the estimate stays near it.
        let noise = |i: usize| deg(0.5) * ((i * 7919 % 101) as f64 / 50.0 - 1.0);
        let mut last = 0.0;
        for i in 0..100 {
            last = t.update(Some(deg(2.0) + noise(i)));
        }
        assert!((last - deg(2.0)).abs() < deg(0.1), "{}", last.to_degrees());
        // A step of 1.5 degrees (a grade change): followed within two seconds.
        for i in 0..50 {
            last = t.update(Some(deg(3.5) + noise(i)));
        }
        assert!((last - deg(3.5)).abs() < deg(0.2), "{}", last.to_degrees());
        // Frames without an observation hold it.
        for _ in 0..25 {
            last = t.update(None);
        }
        assert!((last - deg(3.5)).abs() < deg(0.2));
        // Lines implying 8 degrees more: bounded by pitch_max_change_deg.
        for _ in 0..100 {
            last = t.update(Some(deg(10.0)));
        }
        assert!((last - deg(2.0 + cfg.pitch_max_change_deg)).abs() < 1e-9);
    }

    #[test]
    fn a_single_wild_observation_is_set_aside() {
        let cfg = TrackingConfig::default();
        let mut t = PitchTracker::new(&cfg, deg(2.0), 25.0);
        for _ in 0..50 {
            t.update(Some(deg(2.0)));
        }
        let p = t.update(Some(deg(4.5)));
        assert!((p - deg(2.0)).abs() < 1e-9, "{}", p.to_degrees());
    }
}
