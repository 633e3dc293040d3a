#!/usr/bin/env bash
# Installs everything hourglass's build, demo and tests need on a fresh Debian machine that has
# only the Rust and Python toolchains (run as root). Safe to run again: it installs only what is
# missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v m4 >/dev/null || missing+=(m4)                 # GMP's build
command -v pkg-config >/dev/null || missing+=(pkg-config)   # openssl-sys (benchmark baseline)
[[ -f /usr/include/openssl/bn.h ]] || missing+=(libssl-dev) # OpenSSL headers for the baseline
command -v openssl >/dev/null || missing+=(openssl)         # interop tests
command -v python3 >/dev/null || missing+=(python3 python3-pip)
command -v make >/dev/null || missing+=(make)
command -v gcc >/dev/null || missing+=(gcc)
python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)   # the Python package's tests
command -v age >/dev/null || missing+=(age)                 # age-plugin-hourglass's end-to-end tests
command -v curl >/dev/null || missing+=(curl)               # README's service example
command -v chromium >/dev/null || missing+=(chromium)       # the service's browser test (WebDriver)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)   # the service on PostgreSQL
command -v runuser >/dev/null || missing+=(util-linux)      # PostgreSQL test clusters run as postgres
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python oracles for the interop tests (independent RSA implementations).
if ! python3 -c 'import cryptography, Crypto' 2>/dev/null; then
    echo "setup: installing Python packages cryptography and pycryptodome"
    python3 -m pip --version >/dev/null 2>&1 || python3 -m ensurepip --upgrade >/dev/null
    python3 -m pip install --quiet --disable-pip-version-check cryptography pycryptodome \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages cryptography pycryptodome
fi
# maturin builds the Python package's wheel (crates/hourglass-py).
if ! command -v maturin >/dev/null; then
    echo "setup: installing maturin"
    python3 -m pip install --quiet --disable-pip-version-check maturin \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages maturin
fi
echo "setup: ok"
