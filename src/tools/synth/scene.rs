//! The road-scene renderer: every output (distorted) pixel is supersampled; each sample's ray is
//! cast (after inverting the lens distortion) onto the flat road or a car, and shaded: asphalt
//! texture, a solid yellow left line, a dashed white right line, optional tree shadows, concrete
//! sections, tar seams, a brightness ramp and sensor noise.

use super::noise::{fbm2, gauss, hash3, smoothstep, unit, value1, value2};
use super::rig::Rig;
use super::road::RoadFrame;
use crate::base::error::{Error, Result};
use crate::base::frame::BgrFrame;
use opencv::core::{self, Mat};
use opencv::prelude::*;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// What the road looks like. Lengths in metres, colours BGR 0..255.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneOptions {
    /// Lane width, centre of the left line to centre of the right line. Default 3.7.
    pub lane_width_m: f64,
    /// Painted line width. Default 0.15.
    pub line_width_m: f64,
    /// Dash and gap lengths of the right line (along the centre line). Defaults 3 and 9.
    pub dash_m: f64,
    pub gap_m: f64,
    /// Tree shadows across the lane (cast from the left verge, reaching the right line now and then).
    pub shadows: bool,
    /// Lighter concrete sections (25 m of every 60 m).
    pub concrete: bool,
    /// Dark tar seams along and across the lane.
    pub seams: bool,
    /// Exposure ramp across the image (left 20% darker, right 10% brighter).
    pub ramp: bool,
    /// Amplitude of the asphalt texture, grey levels. Default 10.
    pub texture: f64,
    /// Standard deviation of per-pixel sensor noise, grey levels. Default 2.
    pub noise: f64,
    /// Seed of every texture, hazard placement and noise.
    pub seed: u64,
    /// A solid white line at the right edge of the lane to the right (so that lane can be
    /// followed after a lane change). Default false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub edge_line: bool,
}

impl Default for SceneOptions {
    fn default() -> Self {
        Self {
            lane_width_m: 3.7,
            line_width_m: 0.15,
            dash_m: 3.0,
            gap_m: 9.0,
            shadows: false,
            concrete: false,
            seams: false,
            ramp: false,
            texture: 10.0,
            noise: 2.0,
            seed: 1,
            edge_line: false,
        }
    }
}

impl SceneOptions {
    /// Check lengths and amplitudes are usable.
    pub fn validate(&self) -> Result<()> {
        let chk = |name: &str, v: f64, lo: f64, hi: f64| -> Result<()> {
            if !(v.is_finite() && v >= lo && v <= hi) {
                return Err(Error::Invalid(format!(
                    "{name} = {v} (expected {lo}..={hi})"
                )));
            }
            Ok(())
        };
        chk("lane width", self.lane_width_m, 2.0, 6.0)?;
        chk("line width", self.line_width_m, 0.05, 0.5)?;
        chk("dash length", self.dash_m, 0.5, 50.0)?;
        chk("gap length", self.gap_m, 0.0, 50.0)?;
        chk("texture", self.texture, 0.0, 60.0)?;
        chk("noise", self.noise, 0.0, 30.0)?;
        Ok(())
    }
}

/// A white car-like box standing in the road (its centre on the ground at `s_m`, `d_m`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Car {
    pub s_m: f64,
    pub d_m: f64,
}

const CAR_LENGTH: f64 = 4.5;
const CAR_WIDTH: f64 = 1.8;
const CAR_HEIGHT: f64 = 1.45;
const CAR_CLEARANCE: f64 = 0.2;

/// A car box in the vehicle frame: centre, unit axes along the road (t) and to the right (n).
#[derive(Clone, Copy)]
struct CarBox {
    cx: f64,
    cz: f64,
    tx: f64,
    tz: f64,
}

/// Precomputed rays of one rig at one supersampling factor; renders frames of road scenes.
pub struct Renderer {
    rig: Rig,
    ss: usize,
    width: usize,
    height: usize,
    /// World rays (X, Y down, Z) per sample, row-major over the supersampled grid.
    rays: Vec<[f32; 3]>,
}

/// Colours (BGR).
const ASPHALT: [f64; 3] = [100.0, 101.0, 104.0];
const CONCRETE: [f64; 3] = [172.0, 176.0, 178.0];
const YELLOW: [f64; 3] = [40.0, 200.0, 230.0];
const WHITE: [f64; 3] = [236.0, 238.0, 240.0];
const SEAM: [f64; 3] = [40.0, 40.0, 42.0];
const VERGE: [f64; 3] = [84.0, 100.0, 86.0];
const GRAVEL: [f64; 3] = [110.0, 114.0, 118.0];
const HAZE: [f64; 3] = [196.0, 194.0, 188.0];
const SKY_LOW: [f64; 3] = [232.0, 222.0, 205.0];
const SKY_HIGH: [f64; 3] = [214.0, 160.0, 112.0];
const TREES: [f64; 3] = [52.0, 78.0, 60.0];
const CAR_BODY: [f64; 3] = [238.0, 238.0, 236.0];
const CAR_GLASS: [f64; 3] = [58.0, 52.0, 48.0];
const TAIL_LIGHT: [f64; 3] = [40.0, 40.0, 190.0];

#[inline]
fn mix(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [
        a[0] + t * (b[0] - a[0]),
        a[1] + t * (b[1] - a[1]),
        a[2] + t * (b[2] - a[2]),
    ]
}

#[inline]
fn scale(a: [f64; 3], f: f64) -> [f64; 3] {
    [a[0] * f, a[1] * f, a[2] * f]
}

#[inline]
fn add(a: [f64; 3], v: f64) -> [f64; 3] {
    [a[0] + v, a[1] + v, a[2] + v]
}

/// Weight of a texture octave of wavelength `lambda` for a sample footprint `fp` (fades out
/// octaves finer than about two samples, to avoid aliasing).
#[inline]
fn lod(lambda: f64, fp: f64) -> f64 {
    ((lambda / fp - 2.0) / 2.0).clamp(0.0, 1.0)
}

impl Renderer {
    /// Precompute the ray of every sample of a `ss` x `ss` supersampled grid over the image.
    pub fn new(rig: &Rig, supersample: u32) -> Result<Self> {
        rig.validate()?;
        if !(1..=4).contains(&supersample) {
            return Err(Error::Invalid(format!(
                "supersample = {supersample} (expected 1..=4)"
            )));
        }
        let ss = supersample as usize;
        let (w, h) = (rig.camera.width as usize, rig.camera.height as usize);
        let (sw, sh) = (w * ss, h * ss);
        let mut rays = vec![[0f32; 3]; sw * sh];
        rays.par_chunks_mut(sw).enumerate().for_each(|(sy, row)| {
            let v = (sy as f64 + 0.5) / ss as f64 - 0.5;
            for (sx, r) in row.iter_mut().enumerate() {
                let u = (sx as f64 + 0.5) / ss as f64 - 0.5;
                let (dx, dy, dz) = rig.ray(u, v);
                *r = [dx as f32, dy as f32, dz as f32];
            }
        });
        Ok(Self {
            rig: rig.clone(),
            ss,
            width: w,
            height: h,
            rays,
        })
    }

    pub fn rig(&self) -> &Rig {
        &self.rig
    }

    /// Render one frame of `road` (the centre line around the vehicle) with `opts`; `car` places
    /// a white car; `frame_seed` varies the sensor noise between video frames.
    pub fn render(
        &self,
        road: &RoadFrame,
        opts: &SceneOptions,
        car: Option<Car>,
        frame_seed: u32,
    ) -> Result<BgrFrame> {
        opts.validate()?;
        let (w, h, ss) = (self.width, self.height, self.ss);
        let sw = w * ss;
        let car_box = car.map(|c| {
            let (cx, cz) = road.point(c.s_m, c.d_m);
            let (ax, az) = road.point(c.s_m + 0.5, c.d_m);
            let (bx, bz) = road.point(c.s_m - 0.5, c.d_m);
            let (tx, tz) = (ax - bx, az - bz);
            let n = (tx * tx + tz * tz).sqrt();
            CarBox {
                cx,
                cz,
                tx: tx / n,
                tz: tz / n,
            }
        });
        let seed = (opts.seed as u32) ^ ((opts.seed >> 32) as u32).wrapping_mul(0x9E37_79B1);
        let ctx = Shader {
            rig: &self.rig,
            road,
            opts,
            car: car_box,
            seed,
            focal: self.rig.camera.fy() * ss as f64,
        };
        let mut out = vec![0u8; w * h * 3];
        out.par_chunks_mut(w * 3).enumerate().for_each(|(y, row)| {
            let mut s_guess = road.pose.s_m + 10.0;
            let n = ss * ss;
            let mut hits: Vec<Hit> = Vec::with_capacity(n);
            for x in 0..w {
                hits.clear();
                for sy in 0..ss {
                    let base = (y * ss + sy) * sw + x * ss;
                    for sx in 0..ss {
                        let r = self.rays[base + sx];
                        hits.push(ctx.hit(r[0] as f64, r[1] as f64, r[2] as f64, &mut s_guess));
                    }
                }
                let centre = self.rays[(y * ss + ss / 2) * sw + x * ss + ss / 2];
                let mut c = ctx.pixel(&hits, centre);
                if opts.ramp {
                    let f = 0.8 + 0.3 * (x as f64 / w as f64) + 0.05 * (y as f64 / h as f64);
                    c = scale(c, f);
                }
                if opts.noise > 0.0 {
                    let g = opts.noise
                        * gauss(
                            x as u32,
                            y as u32,
                            seed ^ frame_seed.wrapping_mul(0x2545_F491),
                        );
                    c = add(c, g);
                }
                for k in 0..3 {
                    row[x * 3 + k] = c[k].round().clamp(0.0, 255.0) as u8;
                }
            }
        });
        let mut m = Mat::new_rows_cols_with_default(
            h as i32,
            w as i32,
            core::CV_8UC3,
            core::Scalar::all(0.0),
        )?;
        m.data_bytes_mut()?.copy_from_slice(&out);
        BgrFrame::new(m)
    }
}

/// Everything one sample's shading needs.
struct Shader<'a> {
    rig: &'a Rig,
    road: &'a RoadFrame,
    opts: &'a SceneOptions,
    car: Option<CarBox>,
    seed: u32,
    /// Focal length in samples (for texture level of detail).
    focal: f64,
}

/// What one sample's ray hits.
#[derive(Clone, Copy)]
enum Hit {
    Sky,
    Car([f64; 3]),
    /// Ground on the road table: Frenet coordinates, vehicle-frame position, distance.
    Ground {
        s: f64,
        d: f64,
        x: f64,
        z: f64,
        dist: f64,
    },
    /// Ground beyond the road table.
    Far {
        dist: f64,
    },
}

/// Surface at one ground sample (the colour is completed with per-pixel texture).
#[derive(Clone, Copy, PartialEq)]
enum Material {
    Verge,
    Gravel,
    Asphalt,
    Concrete,
    Seam,
    Yellow,
    White,
}

/// Per-pixel texture values, evaluated once at the mean ground position of the pixel's samples.
struct Texture {
    verge: f64,
    gravel: f64,
    asphalt: f64,
    concrete: f64,
    wear: f64,
    light: f64,
    fog: f64,
}

impl Shader<'_> {
    /// Cast one sample's ray (camera at the origin, Y down, ground at Y = height).
    fn hit(&self, dx: f64, dy: f64, dz: f64, s_guess: &mut f64) -> Hit {
        let hcam = self.rig.height_m;
        let t_ground = if dy > 1e-9 { hcam / dy } else { f64::INFINITY };
        if let Some(cb) = &self.car {
            if let Some(c) = self.shade_car(cb, dx, dy, dz, t_ground) {
                return Hit::Car(c);
            }
        }
        let horiz = (dx * dx + dz * dz).sqrt();
        if !t_ground.is_finite() || t_ground * horiz > 3000.0 {
            return Hit::Sky;
        }
        let (x, z) = (t_ground * dx, t_ground * dz);
        let dist = t_ground * (dx * dx + dy * dy + dz * dz).sqrt();
        match self.road.frenet(x, z, *s_guess) {
            Some(f) => {
                *s_guess = f.s;
                Hit::Ground {
                    s: f.s,
                    d: f.d,
                    x,
                    z,
                    dist,
                }
            }
            None => Hit::Far { dist },
        }
    }

    /// Average the samples of one pixel; `centre` is the ray of its middle sample.
    fn pixel(&self, hits: &[Hit], centre: [f32; 3]) -> [f64; 3] {
        let mut n = 0.0;
        let (mut ms, mut md, mut mx, mut mz, mut mdist) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for h in hits {
            if let Hit::Ground { s, d, x, z, dist } = *h {
                n += 1.0;
                ms += s;
                md += d;
                mx += x;
                mz += z;
                mdist += dist;
            }
        }
        let tex = (n > 0.0).then(|| self.texture(ms / n, md / n, mx / n, mz / n, mdist / n));
        let mut sky: Option<[f64; 3]> = None;
        let mut acc = [0.0; 3];
        for h in hits {
            let c = match *h {
                Hit::Sky => *sky.get_or_insert_with(|| {
                    self.sky(centre[0] as f64, centre[1] as f64, centre[2] as f64)
                }),
                Hit::Car(c) => c,
                Hit::Far { dist } => mix(scale(VERGE, 0.9), HAZE, 1.0 - (-dist / 900.0).exp()),
                Hit::Ground { s, d, .. } => match &tex {
                    Some(t) => self.ground_colour(self.material(s, d), t),
                    None => VERGE,
                },
            };
            acc[0] += c[0];
            acc[1] += c[1];
            acc[2] += c[2];
        }
        scale(acc, 1.0 / hits.len().max(1) as f64)
    }

    fn sky(&self, dx: f64, dy: f64, dz: f64) -> [f64; 3] {
        let horiz = (dx * dx + dz * dz).sqrt();
        let elev = (-dy).atan2(horiz);
        let az = dx.atan2(dz);
        let tree_top = 0.012
            + 0.014 * value1(az * 25.0, self.seed ^ 0x77)
            + 0.006 * value1(az * 120.0, self.seed ^ 0x78);
        if elev < tree_top {
            let n = value2(az * 400.0, elev * 400.0, self.seed ^ 0x79);
            let c = add(TREES, 16.0 * (n - 0.5));
            return mix(c, HAZE, 0.35);
        }
        let t = (elev / 0.35).clamp(0.0, 1.0);
        mix(SKY_LOW, SKY_HIGH, t.sqrt())
    }

    /// Ray/box intersection with the car; its colour when the car is nearer than the ground.
    fn shade_car(&self, cb: &CarBox, dx: f64, dy: f64, dz: f64, t_ground: f64) -> Option<[f64; 3]> {
        let hcam = self.rig.height_m;
        // Car frame: a along the road, b to the right, c down; origin at the box centre.
        let yc = hcam - CAR_CLEARANCE - (CAR_HEIGHT - CAR_CLEARANCE) / 2.0;
        let (ox, oy, oz) = (-cb.cx, -yc, -cb.cz);
        let (nx, nz) = (cb.tz, -cb.tx);
        let o = [ox * cb.tx + oz * cb.tz, ox * nx + oz * nz, oy];
        let d = [dx * cb.tx + dz * cb.tz, dx * nx + dz * nz, dy];
        let half = [
            CAR_LENGTH / 2.0,
            CAR_WIDTH / 2.0,
            (CAR_HEIGHT - CAR_CLEARANCE) / 2.0,
        ];
        let (mut t0, mut t1) = (0.0f64, t_ground);
        let mut axis = 0usize;
        for i in 0..3 {
            if d[i].abs() < 1e-12 {
                if o[i].abs() > half[i] {
                    return None;
                }
                continue;
            }
            let (mut a, mut b) = ((-half[i] - o[i]) / d[i], (half[i] - o[i]) / d[i]);
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            if a > t0 {
                t0 = a;
                axis = i;
            }
            t1 = t1.min(b);
            if t0 > t1 {
                return None;
            }
        }
        // Hit point in car coordinates; the third is the height coordinate (down).
        let p = [o[0] + t0 * d[0], o[1] + t0 * d[1], o[2] + t0 * d[2]];
        let up = (half[2] - p[2]) / (2.0 * half[2]); // 0 at the bottom, 1 at the roof
        let col = match axis {
            2 => scale(CAR_BODY, 0.97),
            _ => {
                let face = if axis == 0 { 0.93 } else { 0.82 };
                if up > 0.62 && up < 0.93 {
                    CAR_GLASS
                } else if axis == 0 && up > 0.35 && up < 0.5 && p[1].abs() > half[1] - 0.35 {
                    TAIL_LIGHT
                } else if up < 0.12 {
                    scale(CAR_BODY, 0.45)
                } else {
                    scale(CAR_BODY, face)
                }
            }
        };
        Some(col)
    }

    /// The surface at Frenet `(s, d)`.
    fn material(&self, s: f64, d: f64) -> Material {
        let o = self.opts;
        let seed = self.seed;
        let half = o.lane_width_m / 2.0;
        let left_edge = -half - 1.3;
        let right_edge = half + o.lane_width_m + 1.0;
        if d < left_edge - 0.6 || d > right_edge + 0.6 {
            return Material::Verge;
        }
        if d < left_edge || d > right_edge {
            return Material::Gravel;
        }
        let lw = o.line_width_m / 2.0;
        if (d + half).abs() < lw {
            return Material::Yellow;
        }
        if (d - half).abs() < lw && s.rem_euclid(o.dash_m + o.gap_m) < o.dash_m {
            return Material::White;
        }
        if o.edge_line && (d - half - o.lane_width_m).abs() < lw {
            return Material::White;
        }
        if o.seams {
            let s1 = -0.5
                + 0.35 * (s / 23.0 + 1.3 * unit(hash3(1, 2, seed))).sin()
                + 0.12 * (s / 6.1).sin();
            let s2 = half - 0.45 + 0.2 * (s / 17.0 + 4.0 * unit(hash3(3, 4, seed))).sin();
            let s3 = -half + 0.25 + 0.15 * (s / 31.0).sin();
            let near = |c: f64| (d - c).abs() < 0.03;
            let transverse = {
                let cell = (s / 14.0).floor();
                let at = cell * 14.0 + 4.0 * unit(hash3(cell as i64 as u32, 9, seed));
                (s - at - 0.05 * d).abs() < 0.025
            };
            if near(s1) || near(s2) || near(s3) || transverse {
                return Material::Seam;
            }
        }
        if o.concrete {
            if let Some(rel) = self.concrete_at(s) {
                if d > -half - 0.5 && d < half + o.lane_width_m + 0.2 {
                    // Transverse joints every 4.5 m.
                    if (rel / 4.5).fract() * 4.5 < 0.02 {
                        return Material::Seam;
                    }
                    return Material::Concrete;
                }
            }
        }
        Material::Asphalt
    }

    /// Position within a concrete section (25 m of every 60 m, phase jittered), if `s` is in one.
    fn concrete_at(&self, s: f64) -> Option<f64> {
        let period = 60.0;
        let cell = (s / period).floor();
        let phase = unit(hash3(cell as i64 as u32, 0xC0C0, self.seed)) * 20.0;
        let rel = s - cell * period - phase;
        (rel > 0.0 && rel < 25.0).then_some(rel)
    }

    /// Texture, shadow and fog at the mean ground position of a pixel.
    fn texture(&self, s: f64, d: f64, x: f64, z: f64, dist: f64) -> Texture {
        let o = self.opts;
        let seed = self.seed;
        let half = o.lane_width_m / 2.0;
        let fp = dist * dist / (self.focal * self.rig.height_m) + dist / self.focal;
        let broad = fbm2(s / 6.0, d / 4.0, 2, seed ^ 0x21) - 0.5;
        let mid = lod(0.8, fp) * (value2(s / 0.8, d / 0.8, seed ^ 0x22) - 0.5);
        let fine = lod(0.15, fp) * (value2(s / 0.15, d / 0.15, seed ^ 0x23) - 0.5);
        let asphalt = o.texture * (1.2 * broad + 0.6 * mid + 0.8 * fine);
        let concrete = o.texture * 0.5 * (broad + 0.5 * mid);
        let verge = 22.0 * (fbm2(s / 3.0, d / 3.0, 2, seed ^ 0x11) - 0.5) + 12.0 * fine;
        let gravel = 16.0 * fine;
        let wear = value2(s / 0.5, d / 0.3, seed ^ 0x31) - 0.5;
        // Tree shadows: blotches thresholded from fbm, in clumps along the road, cast from the
        // left verge; how far they reach across the lane varies along the road (past the right
        // line about one stretch in ten).
        let mut light = 1.0;
        if o.shadows {
            let clump = smoothstep(0.25, 0.5, value1(s / 14.0, seed ^ 0x41));
            if clump > 0.0 {
                let reach = -half + 0.8 + (o.lane_width_m + 0.2) * value1(s / 9.0, seed ^ 0x43);
                let lateral = smoothstep(reach + 0.8, reach - 0.8, d);
                let f = fbm2(s / 3.5, d / 2.2, 3, seed ^ 0x42);
                let m = smoothstep(0.46, 0.54, f) * clump * lateral;
                light *= 1.0 - 0.58 * m;
            }
        }
        if let Some(cb) = &self.car {
            // Soft contact shadow under the car.
            let (rx, rz) = (x - cb.cx, z - cb.cz);
            let a = (rx * cb.tx + rz * cb.tz).abs() - CAR_LENGTH / 2.0;
            let b = (rx * cb.tz - rz * cb.tx).abs() - CAR_WIDTH / 2.0;
            let out = a.max(b);
            if out < 0.3 {
                light *= 0.35 + 0.65 * smoothstep(-0.1, 0.3, out);
            }
        }
        Texture {
            verge,
            gravel,
            asphalt,
            concrete,
            wear,
            light,
            fog: 1.0 - (-dist / 900.0).exp(),
        }
    }

    fn ground_colour(&self, m: Material, t: &Texture) -> [f64; 3] {
        let c = match m {
            Material::Verge => add(VERGE, t.verge),
            Material::Gravel => add(GRAVEL, t.gravel),
            Material::Asphalt => add(ASPHALT, t.asphalt),
            Material::Concrete => add(CONCRETE, t.concrete),
            Material::Seam => SEAM,
            Material::Yellow => add(YELLOW, 14.0 * t.wear),
            Material::White => add(WHITE, 10.0 * t.wear),
        };
        mix(scale(c, t.light), HAZE, t.fog)
    }
}
