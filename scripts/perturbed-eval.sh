#!/usr/bin/env bash
# Score the hand-checked ego labels on perturbed copies of their frames: mirrored (labels
# mirrored and swapped), darker, heavily JPEG-compressed, blurred. A change that helps the
# labelled frames for a reason should help (or at least not hurt) the perturbed copies too; one
# that fits the frames' quirks shows up here as a loss. Frames go to OUT (default
# /tmp/lanes-perturbed), never into the repo.
#
#   scripts/perturbed-eval.sh [LANES_BINARY] [OUT]
#
# Needs ffmpeg and python3. The data folder is LANES_DATA or ../shared/data.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
lanes="${1:-$here/target/release/lanes}"
out="${2:-/tmp/lanes-perturbed}"
data="${LANES_DATA:-$here/../shared/data}"
labels="$data/labelled/udacity_hard_ego/labels.json"
[ -f "$labels" ] || { echo "perturbed-eval: no $labels" >&2; exit 2; }
for v in "mirror:hflip" "dark:eq=brightness=-0.12:contrast=0.8" "jpeg:null" "blur:gblur=sigma=1.5"; do
  name="${v%%:*}"
  filt="${v#*:}"
  dir="$out/$name"
  if [ ! -f "$dir/labels.json" ]; then
    mkdir -p "$dir"
    python3 - "$data" "$labels" "$dir" "$name" "$filt" <<'EOF'
import json, os, subprocess, sys
data, labels, out, name, filt = sys.argv[1:]
rows = []
for line in open(labels):
    d = json.loads(line)
    if d.get("skip"):
        continue
    src = os.path.join(data, d["raw_file"])
    rel = os.path.splitext(d["raw_file"])[0] + ".jpg"
    dst = os.path.join(out, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    # JPEG quality 31 is ffmpeg's worst; 2 is near-lossless for the other variants.
    q = "31" if name == "jpeg" else "2"
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-vf", filt,
                    "-q:v", q, dst], check=True)
    d["raw_file"] = rel
    d.pop("control_points", None)
    if name == "mirror":
        w = 1280
        left, right = ([(w - 1 - x) if x >= 0 else x for x in l] for l in d["lanes"])
        d["lanes"] = [right, left]
    rows.append(json.dumps(d))
open(os.path.join(out, "labels.json"), "w").write("\n".join(rows) + "\n")
EOF
  fi
  echo "== $name"
  "$lanes" eval "$dir/labels.json" --root "$dir" --camera "$here/calibration/udacity.yml" | tail -3
done
