//! Lane-pixel search and polynomial fit: sliding windows from a histogram, or a band around
//! the previous fit; then a second-order polynomial `x = a*y^2 + b*y + c` per line.

pub mod poly;
pub mod prior_search;
pub mod sliding_window;

pub use poly::Poly2;
pub use prior_search::prior_search;
pub use sliding_window::sliding_window_search;

use crate::config::SearchConfig;
use serde::Serialize;

/// The pixels assigned to one lane line, in bird's-eye coordinates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinePixels {
    pub xs: Vec<u32>,
    pub ys: Vec<u32>,
}

impl LinePixels {
    pub fn len(&self) -> usize {
        self.xs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.xs.is_empty()
    }
    /// Number of distinct rows holding at least one pixel.
    pub fn distinct_rows(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        for y in &self.ys {
            seen.insert(*y);
        }
        seen.len()
    }
}

/// How the pixels were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Sliding,
    Prior,
}

impl SearchMode {
    pub fn as_str(&self) -> &'static str {
        match self {
            SearchMode::Sliding => "sliding",
            SearchMode::Prior => "prior",
        }
    }
}

/// A search window, for drawing: x range [x_low, x_high), y range [y_low, y_high).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub x_low: i32,
    pub x_high: i32,
    pub y_low: i32,
    pub y_high: i32,
}

/// What a search finds: pixels of each line, plus what is needed to draw the search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub mode: SearchMode,
    pub left: LinePixels,
    pub right: LinePixels,
    /// Sliding-window search only: the windows of each line.
    pub left_windows: Vec<Window>,
    pub right_windows: Vec<Window>,
    /// Sliding-window search only: column sums of the bottom half of the mask.
    pub histogram: Vec<u32>,
}

/// The fitted lines of one frame (either may be missing).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaneFit {
    pub left: Option<Poly2>,
    pub right: Option<Poly2>,
    pub left_pixels: usize,
    pub right_pixels: usize,
}

/// Fit both lines of a search result; a line with fewer than `min_rows` distinct rows is not found.
pub fn fit_lines(search: &SearchResult, cfg: &SearchConfig) -> LaneFit {
    let fit_one = |p: &LinePixels| {
        if p.distinct_rows() < cfg.min_rows as usize {
            None
        } else {
            Poly2::fit(&p.xs, &p.ys)
        }
    };
    LaneFit {
        left: fit_one(&search.left),
        right: fit_one(&search.right),
        left_pixels: search.left.len(),
        right_pixels: search.right.len(),
    }
}
