//! Deterministic hash noise for synthetic textures: integer hashes, value noise and fbm. Pure
//! functions of their inputs and a seed, so renders are identical on any thread schedule.

/// A 32-bit avalanche hash of three words.
#[inline]
pub fn hash3(a: u32, b: u32, c: u32) -> u32 {
    let mut h = a.wrapping_mul(0x9E37_79B1)
        ^ b.wrapping_mul(0x85EB_CA77).rotate_left(13)
        ^ c.wrapping_mul(0xC2B2_AE3D).rotate_left(7);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^= h >> 16;
    h
}

/// Uniform in [0, 1) from a hash.
#[inline]
pub fn unit(h: u32) -> f64 {
    (h >> 8) as f64 / (1u32 << 24) as f64
}

/// Uniform in [0, 1) at integer lattice point `(ix, iy)`.
#[inline]
pub fn lattice(ix: i64, iy: i64, seed: u32) -> f64 {
    unit(hash3(ix as u32, iy as u32, seed))
}

/// floor() without a libm call (the baseline x86-64 target has no rounding instruction).
#[inline]
fn ffloor(x: f64) -> f64 {
    let i = x as i64 as f64;
    if i > x {
        i - 1.0
    } else {
        i
    }
}

#[inline]
fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

/// 2-D value noise in [0, 1): smooth interpolation of lattice values, period-free.
#[inline]
pub fn value2(x: f64, y: f64, seed: u32) -> f64 {
    let (fx, fy) = (ffloor(x), ffloor(y));
    let (ix, iy) = (fx as i64, fy as i64);
    let (tx, ty) = (smooth(x - fx), smooth(y - fy));
    let a = lattice(ix, iy, seed);
    let b = lattice(ix + 1, iy, seed);
    let c = lattice(ix, iy + 1, seed);
    let d = lattice(ix + 1, iy + 1, seed);
    let top = a + tx * (b - a);
    let bot = c + tx * (d - c);
    top + ty * (bot - top)
}

/// 1-D value noise in [0, 1).
#[inline]
pub fn value1(x: f64, seed: u32) -> f64 {
    let f = ffloor(x);
    let i = f as i64;
    let t = smooth(x - f);
    let a = lattice(i, 0x5bd1, seed);
    let b = lattice(i + 1, 0x5bd1, seed);
    a + t * (b - a)
}

/// Fractal sum of `octaves` value-noise layers (each half the size and amplitude of the last),
/// normalised to [0, 1).
pub fn fbm2(x: f64, y: f64, octaves: u32, seed: u32) -> f64 {
    let (mut sum, mut amp, mut norm, mut f) = (0.0, 1.0, 0.0, 1.0);
    for o in 0..octaves {
        sum += amp * value2(x * f, y * f, seed.wrapping_add(o * 7919));
        norm += amp;
        amp *= 0.5;
        f *= 2.0;
    }
    sum / norm
}

/// Roughly Gaussian noise with unit standard deviation at integer point `(x, y)`
/// (Irwin-Hall sum of three uniforms, rescaled).
#[inline]
pub fn gauss(x: u32, y: u32, seed: u32) -> f64 {
    let h1 = unit(hash3(x, y, seed));
    let h2 = unit(hash3(x, y, seed ^ 0xA5A5_A5A5));
    let h3 = unit(hash3(x, y, seed ^ 0x3C3C_3C3C));
    (h1 + h2 + h3 - 1.5) * 2.0
}

/// Hermite step from 0 at `e0` to 1 at `e1` (either order).
#[inline]
pub fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_noise_is_continuous_and_in_range() {
        let mut prev = value2(0.0, 0.3, 7);
        for i in 1..2000 {
            let x = i as f64 * 0.005;
            let v = value2(x, 0.3, 7);
            assert!((0.0..1.0).contains(&v));
            assert!((v - prev).abs() < 0.05, "jump at {x}");
            prev = v;
        }
    }

    #[test]
    fn gauss_has_about_unit_spread() {
        let n = 20_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for i in 0..n {
            let g = gauss(i, i * 3 + 1, 11);
            s += g;
            s2 += g * g;
        }
        let mean = s / n as f64;
        let sd = (s2 / n as f64 - mean * mean).sqrt();
        assert!(
            mean.abs() < 0.03 && (sd - 1.0).abs() < 0.05,
            "mean {mean} sd {sd}"
        );
    }
}
