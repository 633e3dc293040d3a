#!/usr/bin/env bash
# The main job: set up a fresh Debian machine (as root), build hourglass for this CPU and run
# `hourglass demo`. Extra arguments go to the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
bash scripts/build-host-gmp.sh
cargo build --release --quiet --features host-gmp -p hourglass
exec target/release/hourglass demo "$@"
