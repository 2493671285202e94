#!/usr/bin/env bash
# The numbers of docs/scale-out.md: lanes batch vs ffmpeg on the 8 clips, start-up of one still
# vs `lanes --version`, queue throughput with 1-3 workers. Run from the repo root after
# `cargo build --release`; needs ../shared/data (or LANES_DATA), ffmpeg and redis-server.
set -euo pipefail
L=./target/release/lanes
DATA=${LANES_DATA:-../shared/data}
INPUTS=("$DATA/videos" "$DATA/lanelines_p1/test_videos" test_videos)
mapfile -t FILES < <(find "${INPUTS[@]}" -name '*.mp4' | sort)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

echo "== batch vs ffmpeg (${#FILES[@]} files), two interleaved rounds"
for round in 1 2; do
  s=$(now); for f in "${FILES[@]}"; do ffmpeg -v error -i "$f" -f null -; done; e=$(now)
  echo "round $round ffmpeg decode: $(secs "$s" "$e") s"
  for j in 1 2; do
    rm -rf "$OUT/b"; s=$(now); $L batch "${INPUTS[@]}" -o "$OUT/b" --render none --jobs $j 2>/dev/null; e=$(now)
    echo "round $round batch --render none --jobs $j: $(secs "$s" "$e") s"
  done
  s=$(now); for f in "${FILES[@]}"; do ffmpeg -v error -i "$f" -c:v mpeg4 -f null -; done; e=$(now)
  echo "round $round ffmpeg decode + mpeg4 encode: $(secs "$s" "$e") s"
  for j in 1 2; do
    rm -rf "$OUT/b"; s=$(now); $L batch "${INPUTS[@]}" -o "$OUT/b" --render overlay --jobs $j 2>/dev/null; e=$(now)
    echo "round $round batch --render overlay --jobs $j: $(secs "$s" "$e") s"
  done
done

echo "== start-up: lanes image on one still vs lanes --version, 7 interleaved runs, medians"
IMG="$DATA/udacity/test_images/straight_lines1.jpg"
v=(); i=()
for n in 1 2 3 4 5 6 7; do
  s=$(date +%s%N); $L --version >/dev/null; e=$(date +%s%N); v+=($(( (e - s) / 1000000 )))
  s=$(date +%s%N); $L image "$IMG" -o "$OUT/img" >/dev/null 2>&1; e=$(date +%s%N); i+=($(( (e - s) / 1000000 )))
done
med() { printf '%s\n' "$@" | sort -n | sed -n 4p; }
mv=$(med "${v[@]}"); mi=$(med "${i[@]}")
echo "version ms: ${v[*]} (median $mv); image ms: ${i[*]} (median $mi); ratio $(echo "scale=2; $mi / $mv" | bc)"

echo "== queue: ${#FILES[@]} jobs, N workers with --drain"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
RP=$!
trap 'kill $RP; rm -rf "$OUT"' EXIT
sleep 0.5
U=redis://127.0.0.1:$PORT/
for n in 1 2 3; do
  redis-cli -p "$PORT" flushall >/dev/null
  rm -rf "$OUT/q"
  $L queue push --redis "$U" "${INPUTS[@]}" 2>/dev/null
  s=$(now); pids=()
  for w in $(seq 1 "$n"); do $L queue work --redis "$U" -o "$OUT/q" --drain --lease 30s 2>/dev/null & pids+=($!); done
  wait "${pids[@]}"; e=$(now)
  t=$(secs "$s" "$e")
  echo "workers $n: $t s, $(echo "scale=1; ${#FILES[@]} * 60 / $t" | bc) jobs/min"
done
