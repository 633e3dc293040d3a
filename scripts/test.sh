#!/usr/bin/env bash
# The full test suite, from a clean clone on a fresh Debian machine (as root): installs what is
# needed, builds GMP for this CPU, then format check, lints, tests and docs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
bash scripts/build-host-gmp.sh
features=(--features hourglass/host-gmp)
# Each stage's start and the seconds so far, so that a slow stage shows in CI's log.
stage() { echo "test.sh: $1 (${SECONDS}s so far)"; }
stage "format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
# Each crate alone and with each of its features, and the fuzz targets.
stage "each crate alone"
bash scripts/check-crates.sh
stage "tests"
cargo test --workspace "${features[@]}"
# The same arithmetic and RSA tests as a CPU without AVX-512 IFMA runs them (the MULX/ADX
# kernels and GMP's constant-time exponentiation). On a CPU without IFMA the run above was
# already that run, and is not repeated.
if grep -qw avx512ifma /proc/cpuinfo; then
    stage "tests without IFMA"
    HOURGLASS_NO_IFMA=1 cargo test -p hourglass-arith -p hourglass-rsa --features hourglass-arith/host-gmp
else
    echo "test.sh: no AVX-512 IFMA on this CPU: the tests above ran the paths without it"
fi
stage "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps "${features[@]}"
# The Python package: an abi3 wheel built with maturin, installed into a fresh virtual
# environment, and its pytest suite against `cryptography` and this build's CLI (pytest exits
# non-zero when it collects no tests).
stage "Python package"
rm -rf target/wheels
maturin build --release -m crates/hourglass-py/Cargo.toml --features host-gmp,extension-module -o target/wheels
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check target/wheels/hourglass-*-abi3-*.whl pytest cryptography
HOURGLASS_BIN="$PWD/target/debug/hourglass" "$venv/bin/python" -m pytest -q crates/hourglass-py/tests
rm -rf "$(dirname "$venv")"
echo "test.sh: all checks passed (${SECONDS}s)"
