#!/usr/bin/env bash
# Every crate of the workspace builds on its own, with none of its optional features and with
# each one (the workspace build unifies features, so `cargo check -p X` alone could break
# unseen), and the fuzz targets build. Called by scripts/test.sh after build-host-gmp.sh: every
# check links the host GMP (`hourglass-arith/host-gmp`), since rug's bundled GMP takes minutes
# to compile and is rug's to test.
set -euo pipefail
cd "$(dirname "$0")/.."
gmp=(--features hourglass-arith/host-gmp)
# One line per member: its name, whether it depends on hourglass-arith, its own features.
members=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    arith = p["name"] == "hourglass-arith" or any(d["name"] == "hourglass-arith" and d["kind"] is None for d in p["dependencies"])
    print(p["name"], int(arith), *sorted(f for f in p["features"] if f != "default"))
')
while read -r crate arith features; do
    flags=()
    if [ "$arith" = 1 ]; then flags=("${gmp[@]}"); fi
    echo "check-crates: $crate (${SECONDS}s so far)"
    cargo check --quiet -p "$crate" "${flags[@]}"
    for feature in $features; do
        [ "$feature" = host-gmp ] && continue
        echo "check-crates: $crate --features $feature (${SECONDS}s so far)"
        cargo check --quiet -p "$crate" "${flags[@]}" --features "$feature"
    done
done <<< "$members"
# The fuzz targets: outside the workspace (their own lock file); `check` needs no nightly
# compiler, and in the workspace's target directory it reuses the dependencies built above,
# as long as both lock files pick the same versions (one differing crate low in the tree,
# `bytes`, made this check rebuild everything above it: a minute of CI).
python3 - <<'PY'
import sys, tomllib
def versions(path):
    with open(path, "rb") as f:
        return {(p["name"], p["version"]) for p in tomllib.load(f)["package"]}
ours, fuzz = versions("Cargo.lock"), versions("fuzz/Cargo.lock")
names = {n for n, _ in ours}
differ = sorted(f"{n} {v}" for n, v in fuzz - ours if n in names)
if differ:
    sys.exit("check-crates: fuzz/Cargo.lock picks versions the workspace does not: "
             + ", ".join(differ)
             + " (align them: cd fuzz && cargo update -p NAME --precise VERSION)")
PY
# libfuzzer-sys compiles libFuzzer's C++ runtime in its build script, which `check` never
# links: pointing it at a prebuilt library (that need not exist) skips that compilation.
echo "check-crates: fuzz targets (${SECONDS}s so far)"
(cd fuzz && CUSTOM_LIBFUZZER_PATH="$PWD/../target/no-libfuzzer/libfuzzer.a" \
    CARGO_TARGET_DIR=../target cargo check --quiet --all-targets "${gmp[@]}")
echo "check-crates: every crate builds on its own and with each feature, and so do the fuzz targets (${SECONDS}s)"
