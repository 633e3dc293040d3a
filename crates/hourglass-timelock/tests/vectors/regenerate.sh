#!/usr/bin/env bash
# Regenerates the puzzle-format vectors of docs/FORMATS.md sections 12-13 (format version 2) with
# the CLI and a fixed --seed (INSECURE on purpose: reproducible keys for tests only).
#   bash crates/hourglass-timelock/tests/vectors/regenerate.sh target/debug/hourglass
# Keys depend only on the seed; the "created" times and the certificate validity follow the clock,
# so a regeneration changes those files. tests/formats.rs checks whatever is committed.
set -euo pipefail
H="$(realpath "${1:?usage: regenerate.sh PATH/TO/hourglass}")"
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOURGLASS_STATE_DIR="$work/state"
seed="hourglass format vectors v2"
"$H" submit new-set --durations 2s,1s --rate 10000 --bits 1024 --name "vector issuer" \
    --seed "$seed" -o "$work/set" 2>/dev/null
cp "$work/set/puzzle-2s.key" "$work/set/puzzle-2s.pub" "$work/set/puzzle-1s.key" "$work/set/set.json" .
"$H" ca new -o "$work/ca" --name "hourglass vector CA" --days 3650 --bits 2048 --seed "$seed ca" 2>/dev/null
cp "$work/ca.crt" ca.crt
"$H" puzzle certify -k puzzle-2s.key --ca-key "$work/ca.key" --ca-cert ca.crt -o puzzle-2s.crt \
    --days 3650 --seed "$seed cert" 2>/dev/null
"$H" puzzle solve -p puzzle-2s.pub -i document.txt -o "$work/document.sol" --quiet
cp "$work/document.sol" document.sol
"$H" submit seal --set set.json -i document.txt --expect 3s --until 3s -o "$work/document.bundle" --quiet
cp "$work/document.bundle" document.bundle
# A public set on the RSA-2048 challenge modulus and a proof-carrying bundle (section 12.10).
"$H" submit new-set --public --modulus rsa-2048 --durations 2s,1s --rate 5000 --name "vector issuer" \
    -o "$work/public" 2>/dev/null
cp "$work/public/set.json" public-set.json
"$H" submit seal --set public-set.json -i document.txt --expect 3s --until 3s -o "$work/public.bundle" --quiet
cp "$work/public.bundle" public.bundle
echo "regenerated: $(ls)"
