"""The hourglass Python package against independent implementations and the CLI.

Run by scripts/test.sh (`pytest crates/hourglass-py/tests`) after the wheel is installed; the
CLI tests need `hourglass` on PATH (HOURGLASS_BIN may name it).
"""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

import hourglass
from hourglass import arith, rsa, timelock, vdf, HourglassError

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding as cpadding


def hourglass_cli():
    exe = os.environ.get("HOURGLASS_BIN") or shutil.which("hourglass")
    if not exe:
        pytest.fail("the hourglass command line is needed (set HOURGLASS_BIN or put it on PATH)")
    return exe


# arith ------------------------------------------------------------------------------------

def test_square_chain_matches_pythons_pow():
    n = (1 << 2047) + 12345 | 1
    x = 0xC0FFEE
    for t in (0, 1, 2, 1000):
        assert arith.square_chain(x, t, n) == pow(x, 1 << t, n)


def test_square_chain_refuses_bad_input():
    with pytest.raises(HourglassError):
        arith.square_chain(5, 10, 4)  # even modulus
    with pytest.raises(HourglassError):
        arith.square_chain(10, 10, 7)  # x >= n
    with pytest.raises(ValueError):
        arith.square_chain(-1, 10, 7)


# rsa --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def key():
    return rsa.generate(2048, "crt")


def test_every_variant_round_trips():
    for variant in rsa.VARIANTS:
        k = rsa.generate(2048, variant, seed=b"py " + variant.encode())
        pub = k.public_key()
        ct = pub.encrypt_oaep(b"session key")
        assert k.decrypt_oaep(ct) == b"session key"
        sig = k.sign_pss(b"paper")
        assert pub.verify_pss(b"paper", sig)
        assert not pub.verify_pss(b"paper, edited", sig)
        info = rsa.inspect(k)
        assert info["bits"] == 2048


def test_pem_round_trip_and_encrypted_keys(key):
    pem = key.to_pem()
    assert rsa.load_private_key(pem).public_key().n == key.public_key().n
    locked = key.to_pem(passphrase=b"correct horse")
    assert locked.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    assert rsa.load_private_key(locked, b"correct horse").public_key().n == key.public_key().n
    with pytest.raises(HourglassError, match="passphrase"):
        rsa.load_private_key(locked, b"wrong")


def test_interop_with_cryptography_both_ways(key):
    theirs_priv = serialization.load_pem_private_key(key.to_pem(), password=None)
    theirs_pub = theirs_priv.public_key()
    ours_pub = key.public_key()
    # Our OAEP, their decryption; their OAEP, our decryption.
    oaep = cpadding.OAEP(mgf=cpadding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    assert theirs_priv.decrypt(ours_pub.encrypt_oaep(b"to them"), oaep) == b"to them"
    assert key.decrypt_oaep(theirs_pub.encrypt(b"to us", oaep)) == b"to us"
    # Our PSS, their verification; their PSS, ours.
    pss = cpadding.PSS(mgf=cpadding.MGF1(hashes.SHA256()), salt_length=32)
    theirs_pub.verify(key.sign_pss(b"m"), b"m", pss, hashes.SHA256())
    assert ours_pub.verify_pss(b"m", theirs_priv.sign(b"m", pss, hashes.SHA256()))
    # PKCS#1 v1.5 is deterministic: both sides make the same bytes.
    v15 = theirs_priv.sign(b"m", cpadding.PKCS1v15(), hashes.SHA256())
    assert key.sign_pkcs1v15(b"m") == v15
    assert ours_pub.verify_pkcs1v15(b"m", v15)
    # Their key, our code.
    from cryptography.hazmat.primitives.asymmetric import rsa as crsa
    other = crsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.BestAvailableEncryption(b"pw"))
    ours = rsa.load_private_key(pem, b"pw")
    assert ours.public_key().verify_pss(b"x", other.sign(b"x", pss, hashes.SHA256()))


def test_bad_input_is_an_exception_not_a_crash(key):
    for junk in (b"", b"garbage", b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"):
        with pytest.raises(HourglassError):
            rsa.load_private_key(junk)
    with pytest.raises(HourglassError):
        key.decrypt_oaep(b"\x00" * 256)
    with pytest.raises(HourglassError):
        rsa.generate(2048, "no-such-variant")
    assert not key.public_key().verify_pss(b"m", b"short")


# vdf --------------------------------------------------------------------------------------

def test_vdf_prove_verify_and_tamper():
    for scheme in ("wesolowski", "pietrzak"):
        proof = vdf.prove("block 7", 3000, scheme=scheme)
        assert vdf.verify(proof)
        assert vdf.verify(proof, input="block 7")
        assert not vdf.verify(proof, input="block 8")
        tampered = proof.replace('"iterations": 3000', '"iterations": 3001')
        assert not vdf.verify(tampered)
    with pytest.raises(HourglassError):
        vdf.verify("not a proof")


def test_batch_verify():
    good = [vdf.prove(f"seed-{i}", 2000) for i in range(4)]
    bad = good[0].replace('"iterations": 2000', '"iterations": 2001')
    assert vdf.batch_verify(good + [bad, "junk"]) == [True] * 4 + [False, False]


def test_a_proof_made_in_python_verifies_with_the_cli_and_back(tmp_path):
    cli = hourglass_cli()
    p = tmp_path / "py.json"
    p.write_text(vdf.prove("interop", 5000))
    subprocess.run([cli, "vdf", "verify", str(p), "--input", "interop"], check=True)
    c = tmp_path / "cli.json"
    subprocess.run([cli, "vdf", "eval", "--input", "from the cli", "--iterations", "5000",
                    "--quiet", "-o", str(c)], check=True)
    assert vdf.verify(c.read_text(), input="from the cli")


def test_progress_is_reported():
    seen = []
    vdf.prove("progress", 3_000_000, progress=lambda done, total: seen.append((done, total)))
    assert seen and all(t == 3_000_000 for _, t in seen)
    assert vdf.prove("bar", 1000, progress=True)  # tqdm if installed, else nothing


# timelock ---------------------------------------------------------------------------------

def test_timelock_round_trip_and_damage():
    sealed = timelock.seal(b"meet at noon", 5000, bits=1024)
    assert timelock.open(sealed) == b"meet at noon"
    damaged = bytearray(sealed)
    damaged[-40] ^= 1
    with pytest.raises(HourglassError, match="damaged"):
        timelock.open(bytes(damaged))
    with pytest.raises(HourglassError):
        timelock.open(b"not a time-lock file")


def test_timelock_files_interoperate_with_the_cli(tmp_path):
    cli = hourglass_cli()
    src = tmp_path / "m.txt"
    src.write_bytes(b"sealed by python")
    timelock.seal_file(str(src), str(tmp_path / "m.tlock"), 3000, bits=1024)
    subprocess.run([cli, "timelock", "open", "-i", str(tmp_path / "m.tlock"),
                    "-o", str(tmp_path / "out.txt"), "--quiet"], check=True)
    assert (tmp_path / "out.txt").read_bytes() == b"sealed by python"
    with pytest.raises(FileExistsError):
        timelock.seal_file(str(src), str(tmp_path / "m.tlock"), 3000, bits=1024)


INTERRUPT = r"""
import signal, sys, hourglass
# A shell that starts a job in the background (`cmd &`) gives it SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler: restore the one an interactive Ctrl-C would meet.
signal.signal(signal.SIGINT, signal.default_int_handler)
sealed = open(sys.argv[1], "rb").read()
def progress(done, total):
    if done > 0:
        print("started", flush=True)
try:
    hourglass.timelock.open(sealed, checkpoint=sys.argv[2], progress=progress)
except KeyboardInterrupt as e:
    print("interrupted:", e, flush=True)
    sys.exit(3)
"""


def test_ctrl_c_during_a_solve_leaves_a_resumable_checkpoint(tmp_path):
    sealed = timelock.seal(b"after the interruption", 200_000_000, bits=1024)
    (tmp_path / "s.tlock").write_bytes(sealed)
    ckpt = tmp_path / "s.ckpt"
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPT, str(tmp_path / "s.tlock"), str(ckpt)],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "started"
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3, out
    assert "checkpoint" in out
    assert ckpt.exists() and ckpt.stat().st_size > 0
    # Resuming starts from the saved squarings (the first report is beyond zero).
    first = []

    def stop_after_first(done, total):
        first.append(done)
        raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        timelock.open(sealed, checkpoint=str(ckpt), progress=stop_after_first)
    assert first[0] > 0


def test_the_package_has_types_and_docs():
    root = os.path.dirname(hourglass.__file__)
    assert os.path.exists(os.path.join(root, "py.typed"))
    assert os.path.exists(os.path.join(root, "_native.pyi"))
    for mod in (hourglass, arith, rsa, timelock, vdf):
        assert mod.__doc__


def test_the_documented_example_runs_as_written():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    text = open(os.path.join(root, "docs", "PYTHON.md")).read()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert block.count("\n") >= 10
    exec(compile(block, "docs/PYTHON.md", "exec"), {})


# submit -----------------------------------------------------------------------------------

def test_submission_private_and_public_with_the_cli(tmp_path):
    from hourglass import submit
    cli = hourglass_cli()
    doc = b"the final paper\n"
    (tmp_path / "paper.txt").write_bytes(doc)
    subprocess.run([cli, "submit", "new-set", "--durations", "2s,1s", "--rate", "20000", "--bits", "1024",
                    "--name", "Py", "-o", str(tmp_path / "keys"), "--quiet"], check=True)
    set_text = (tmp_path / "keys" / "set.json").read_text()
    links = []
    bundle = submit.seal(doc, set_text, str(tmp_path / "b.ckpt"), expect="3s", on_link=links.append)
    assert links and links[-1] == bundle
    keys = [p.read_bytes() for p in (tmp_path / "keys").glob("*.key")]
    verdict = submit.verify(bundle, doc, keys=keys)
    assert verdict["valid"] and verdict["credited_secs"] >= 3
    assert not submit.verify(bundle, doc + b"edited", keys=keys)["valid"]
    (tmp_path / "paper.bundle").write_text(bundle)
    subprocess.run([cli, "submit", "verify", "--keys", str(tmp_path / "keys"), "-i", str(tmp_path / "paper.txt"),
                    str(tmp_path / "paper.bundle"), "--quiet"], check=True)
    # A public set on RSA-2048: anyone verifies, here with the set alone.
    subprocess.run([cli, "submit", "new-set", "--public", "--modulus", "rsa-2048", "--durations", "1s", "--rate", "20000",
                    "-o", str(tmp_path / "pub"), "--quiet"], check=True)
    pub = (tmp_path / "pub" / "set.json").read_text()
    sealed = submit.seal(doc, pub, str(tmp_path / "p.ckpt"), expect=1)
    assert submit.verify(sealed, doc, set=pub)["valid"]
    (tmp_path / "public.bundle").write_text(sealed)
    subprocess.run([cli, "submit", "verify", "--public", str(tmp_path / "public.bundle"), "--document",
                    str(tmp_path / "paper.txt"), "--set", str(tmp_path / "pub" / "set.json"), "--quiet"],
                   check=True)
    # A public bundle given to a private set's keys: invalid, with the reason.
    cross = submit.verify(sealed, doc, keys=keys)
    assert not cross["valid"] and "public set" in cross["reason"], cross
    assert verdict["trust"] == {"kind": "institution-keys"} and not verdict["trustless"]
    assert submit.verify(sealed, doc, set=pub)["trustless"]
    with pytest.raises(ValueError):
        submit.seal(doc, pub, str(tmp_path / "q.ckpt"), expect="soon")


def test_puzzles_keygen_solve_verify_and_the_cli(tmp_path):
    cli = hourglass_cli()
    private, public = timelock.puzzle_keygen(50_000, bits=1024, rate=1e6, issuer="Py")
    doc = b"the document\n"
    seen = []
    solution = timelock.solve(public, doc, progress=lambda d, t: seen.append(d))
    assert timelock.verify_solution(private, doc, solution)
    assert not timelock.verify_solution(private, doc + b"!", solution)
    # The CLI checks the Python solution, and Python the CLI's.
    (tmp_path / "p.key").write_text(private)
    (tmp_path / "p.pub").write_text(public)
    (tmp_path / "doc.txt").write_bytes(doc)
    (tmp_path / "py.sol").write_text(solution)
    subprocess.run([cli, "puzzle", "verify", "-k", str(tmp_path / "p.key"), "-i", str(tmp_path / "doc.txt"),
                    "-s", str(tmp_path / "py.sol")], check=True, capture_output=True)
    subprocess.run([cli, "puzzle", "solve", "-p", str(tmp_path / "p.pub"), "-i", str(tmp_path / "doc.txt"),
                    "-o", str(tmp_path / "cli.sol"), "--quiet"], check=True)
    assert timelock.verify_solution(private, doc, (tmp_path / "cli.sol").read_text())
    with pytest.raises(HourglassError):
        timelock.solve("{}", doc)
