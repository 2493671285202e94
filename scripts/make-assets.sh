#!/bin/sh
# Regenerate the committed synthetic demo assets: test_images/ (stills with truth), test_videos/
# (a 5 s clip with per-frame truth) and calibration/synthetic.yml (the true camera).
# Deterministic: fixed seeds, so a rerun on the same build gives the same files.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
L=target/release/lanes
rm -rf test_images test_videos
$L synth road --suite demo --seed 1 --quality 85 -o test_images
$L synth video --seed 1 --seconds 5 --fps 25 --shadows --car 30 -o test_videos
mkdir -p calibration
cp test_images/camera.yml calibration/synthetic.yml
