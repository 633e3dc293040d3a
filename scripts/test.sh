#!/usr/bin/env bash
# The full test suite, from a clean clone on a fresh Debian machine (as root): installs what is
# needed, builds GMP for this CPU, then format check, lints, tests and docs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
bash scripts/build-host-gmp.sh
features=(--features hourglass/host-gmp)
cargo fmt --all --check
cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
cargo test --workspace "${features[@]}"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps "${features[@]}"
echo "test.sh: all checks passed"
