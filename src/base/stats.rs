//! Order statistics shared by calibration, perspective estimation, scoring and the bench.

/// Percentile `p` (0..=100) with linear interpolation between order statistics (as numpy's
/// default); non-finite values are ignored; `None` when nothing is left.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = (p / 100.0).clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let i = pos.floor() as usize;
    let f = pos - i as f64;
    let j = (i + 1).min(v.len() - 1);
    Some(v[i] + f * (v[j] - v[i]))
}

/// The median (mean of the two middle values for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    percentile(values, 50.0)
}

/// Indices of `count` frames spread evenly over `total` (the middle of each of `count` equal
/// parts), distinct and increasing.
pub fn evenly_spaced(total: usize, count: usize) -> Vec<usize> {
    let count = count.min(total);
    let mut v: Vec<usize> = (0..count)
        .map(|i| ((2 * i + 1) * total) / (2 * count))
        .collect();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0, 8.0, 7.0, 6.0, 9.0];
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert!((percentile(&[1.0, 2.0, 3.0, 4.0], 90.0).unwrap() - 3.7).abs() < 1e-12);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
