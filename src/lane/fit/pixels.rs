//! What a search finds: the pixels of each line, the windows it looked in, and how.
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
        let rows = self.ys.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut seen = vec![false; rows];
        let mut n = 0;
        for &y in &self.ys {
            if !std::mem::replace(&mut seen[y as usize], true) {
                n += 1;
            }
        }
        n
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
