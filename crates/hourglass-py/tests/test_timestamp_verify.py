"""``hourglass.timestamp.verify`` on six real authorities' tokens (sigstore's ECDSA P-384 in
production and staging, FreeTSA, DigiCert, GlobalSign, Microsoft: the files of
crates/hourglass-timestamp/tests/data/tsa), with the same verdict as the CLI's ``hourglass
timestamp verify --json`` on the same files; refused (``valid`` False) for other data or another
authority's anchor; errors raise.

Run by scripts/test.sh (pytest, with HOURGLASS_BIN naming the CLI built by the test run).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hourglass import HourglassError, timestamp

DATA = Path(__file__).resolve().parents[2] / "hourglass-timestamp" / "tests" / "data" / "tsa"
REAL = sorted(p.name for p in DATA.iterdir() if p.is_dir())


def cli():
    exe = os.environ.get("HOURGLASS_BIN") or shutil.which("hourglass")
    if not exe:
        pytest.fail("the hourglass command line is needed (set HOURGLASS_BIN or put it on PATH)")
    return exe


def inputs(name):
    """The token's CA, untrusted certificates, and data or digest, as files and as bytes."""
    d = DATA / name
    args = {"tsa_cas": [(d / "ca.pem").read_bytes()]}
    flags = ["--tsa-ca", str(d / "ca.pem")]
    if (d / "chain.pem").exists():
        args["untrusted"] = [(d / "chain.pem").read_bytes()]
        flags += ["--untrusted", str(d / "chain.pem")]
    if (d / "data.bin").exists():
        args["data"] = (d / "data.bin").read_bytes()
        flags += ["--data", str(d / "data.bin")]
    else:
        digest = (d / "imprint.txt").read_text().split()[1]
        args["digest"] = bytes.fromhex(digest)
        flags += ["--digest", digest]
    return args, flags


def test_there_are_six_real_authorities():
    assert len(REAL) == 6, REAL


@pytest.mark.parametrize("name", REAL)
def test_a_real_token_verifies_as_the_cli_verifies_it(name):
    args, flags = inputs(name)
    token = (DATA / name / "token.der").read_bytes()
    v = timestamp.verify(token, **args)
    assert v["valid"] is True, v
    for key in ("gen_time", "accuracy", "latest", "tsa", "serial", "policy", "hash", "signature", "path"):
        assert key in v, (key, v)
    assert v["path"][0] == v["tsa"] and v["path"][-1] == v["anchor"], v
    out = subprocess.run([cli(), "timestamp", "verify", str(DATA / name / "token.der"), *flags, "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == v


@pytest.mark.parametrize("name", REAL)
def test_a_real_token_is_refused_for_other_data_or_another_anchor(name):
    args, _ = inputs(name)
    token = (DATA / name / "token.der").read_bytes()
    other = dict(args)
    if "data" in other:
        other["data"] = other["data"] + b"!"
    else:
        other["digest"] = bytes(32)
    v = timestamp.verify(token, **other)
    assert v["valid"] is False and "covers other data" in v["reason"], v
    elsewhere = REAL[(REAL.index(name) + 1) % len(REAL)]
    v = timestamp.verify(token, **dict(args, tsa_cas=[(DATA / elsewhere / "ca.pem").read_bytes()]))
    assert v["valid"] is False and "does not chain" in v["reason"], v


def test_errors_raise():
    args, _ = inputs("sigstore-prod-2026-ecdsa-p384-nocert")
    token = (DATA / "sigstore-prod-2026-ecdsa-p384-nocert" / "token.der").read_bytes()
    with pytest.raises(HourglassError, match="untrusted"):
        timestamp.verify(token, args["tsa_cas"], data=args["data"])
    with pytest.raises(HourglassError):
        timestamp.verify(b"not a token", args["tsa_cas"], data=b"x")
    with pytest.raises(ValueError):
        timestamp.verify(token, [], data=b"x")
    with pytest.raises(ValueError):
        timestamp.verify(token, args["tsa_cas"])
    with pytest.raises(TypeError):
        timestamp.verify("text", args["tsa_cas"], data=b"x")
