//! Accuracy scoring against synthetic truth, TuSimple, CULane and mask labels (placeholder).
