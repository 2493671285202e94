#!/usr/bin/env bash
# Install what `lanes` needs on a fresh Debian machine, only when it is missing.
# Usage: scripts/setup.sh [test]   ("test" also installs what the test suite needs)
set -euo pipefail
# FFmpeg's -dev packages: `lanes` reads and writes video through libavformat, libavcodec and
# libswscale (the ffmpeg-next crate); the `ffmpeg` tool is used by tests and scripts.
# libjpeg-dev: stills are read and written through libjpeg (csrc/jpeg.c), not OpenCV's imgcodecs.
pkgs=(pkg-config libopencv-dev clang libclang-dev ffmpeg libjpeg-dev
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libswresample-dev
  libavfilter-dev libavdevice-dev)
if [[ "${1:-}" == "test" ]]; then
  pkgs+=(chromium chromium-driver opencv-doc redis-server openssl)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install a Rust toolchain (rustup, Rust >= 1.88)" >&2
  exit 1
fi
