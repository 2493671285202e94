# Two commands do all the set-up on a fresh Debian machine:
#   make demo   - install what is missing, build, run `lanes video` on the committed synthetic clip
#   make test   - install what is missing (incl. the browser for the tuner test), run every test
.PHONY: demo test build assets bench

assets:
	scripts/make-assets.sh

DEMO_VIDEO ?= test_videos/synthetic_drive.mp4
DEMO_CAMERA ?= calibration/synthetic.yml
DEMO_CONFIG ?= test_videos/synthetic_drive.toml

build:
	scripts/setup.sh
	cargo build --release

demo: build
	mkdir -p out
	./target/release/lanes video --camera $(DEMO_CAMERA) --config $(DEMO_CONFIG) $(DEMO_VIDEO) -o out/demo.mp4 --telemetry out/demo.jsonl
	./target/release/lanes video --camera $(DEMO_CAMERA) --config $(DEMO_CONFIG) $(DEMO_VIDEO) -o out/demo_diagnostic.mp4 --diagnostic
	./target/release/lanes eval test_videos/synthetic_drive.json
	@echo "demo: wrote out/demo.mp4, out/demo_diagnostic.mp4 and out/demo.jsonl"

test:
	scripts/setup.sh test
	cargo test --release --all-targets

bench: build
	./target/release/lanes bench ../shared/data/videos/hortovanyi/project_video_short.mp4 --camera calibration/udacity.yml --repeat 3
