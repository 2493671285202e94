#!/usr/bin/env bash
# Check that telemetry (and the pixels of a short overlay and diagnostic render) are identical
# to a baseline made by an earlier build: used for refactors that must not change behaviour.
# Usage: scripts/check-identical.sh make|check BASELINE_DIR
set -euo pipefail
mode=$1; dir=$2
L=./target/release/lanes
D=${LANES_DATA:-../shared/data}
mkdir -p "$dir"
out=$dir; [[ $mode == check ]] && out=$(mktemp -d)
for v in "$D"/videos/*/*.mp4; do
  n=$(basename "$v" .mp4)
  [[ $v == */anycam/* ]] && continue
  $L video --camera calibration/udacity.yml --no-render "$v" --telemetry "$out/$n.jsonl" 2>/dev/null
done
$L video --camera calibration/synthetic.yml --config test_videos/synthetic_drive.toml test_videos/synthetic_drive.mp4 --no-render --telemetry "$out/synth.jsonl" 2>/dev/null
clip="$D/videos/hortovanyi/project_video_short.mp4"
$L video --camera calibration/udacity.yml "$clip" --frames 30 --diagnostic -o "$out/diag.mp4" 2>/dev/null
$L video --camera calibration/udacity.yml "$clip" --frames 30 -o "$out/ovl.mp4" 2>/dev/null
# (timings and output paths masked: they change from run to run)
$L image --camera calibration/udacity.yml --json -o "$out/img" "$D"/udacity/test_images 2>/dev/null \
  | sed -E 's/"ms":[0-9.e+-]+/"ms":0/g; s#"[^"]*/img/#"img/#g' > "$out/images.json"
rm -rf "$out/img"
# Self-calibrated runs (no config) on the other cameras, with the geometry they found.
for v in "$D"/videos/anycam/*.mp4 "$D"/lanelines_p1/test_videos/solidWhiteRight.mp4; do
  n=$(basename "$v" .mp4)
  $L video "$v" --no-render --frames 120 --telemetry "$out/sc_$n.jsonl" 2>/dev/null
done
for f in diag ovl; do ffmpeg -loglevel error -y -i "$out/$f.mp4" -f framemd5 "$out/$f.md5"; rm "$out/$f.mp4"; done
if [[ $mode == check ]]; then
  bad=0
  for f in "$dir"/*.jsonl "$dir"/*.md5 "$dir"/*.json; do
    if cmp -s "$f" "$out/$(basename "$f")"; then echo "same: $(basename "$f")"; else echo "DIFFERENT: $(basename "$f")"; bad=1; fi
  done
  rm -rf "$out"
  exit $bad
fi
