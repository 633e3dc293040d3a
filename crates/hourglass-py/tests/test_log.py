"""The transparency log from Python, against a real ``hourglass serve`` and a real ``hourglass log
witness`` on loopback: ``submit.check_receipt`` with and without the log's key and the witness,
``log.verify`` (first run, then the log's growth), ``log.search``, and a forged receipt.

Run by scripts/test.sh (pytest, with HOURGLASS_BIN naming the CLI built by the test run).
"""

import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request
import uuid

import pytest

from hourglass import HourglassError, log, submit


def cli():
    exe = os.environ.get("HOURGLASS_BIN") or shutil.which("hourglass")
    if not exe:
        pytest.fail("the hourglass command line is needed (set HOURGLASS_BIN or put it on PATH)")
    return exe


def run(*args):
    out = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"hourglass {' '.join(map(str, args))}: {out.stderr}"
    return out.stdout


def start(*args):
    """Starts a hourglass server process; returns (process, base URL)."""
    p = subprocess.Popen([cli(), *map(str, args)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    for line in p.stderr:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, m.group(1)
        assert time.time() < deadline, "no server"
    pytest.fail("the server did not start")


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def post_json(url, token, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def upload(base, bundle, document):
    boundary = uuid.uuid4().hex
    body = b""
    for name, data in (("bundle", bundle), ("document", document)):
        body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; "
                 f"filename=\"{name}\"\r\n\r\n").encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(base + "/api/v1/submissions", data=body, method="POST", headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())["id"]


def receipt(base, sid):
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            return get(f"{base}/api/v1/submissions/{sid}/receipt")
        except urllib.error.HTTPError as e:
            assert e.code == 404
            time.sleep(0.2)
    pytest.fail("no receipt")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    d = tmp_path_factory.mktemp("log")
    data = d / "srv"
    data.mkdir()
    run("log", "keygen", "--role", "log", "--name", "py.example/log", "-o", data / "log.key")
    run("log", "keygen", "--name", "w.example", "-o", d / "w.key")
    witness, wurl = start("log", "witness", "--listen", "127.0.0.1:0", "--key", d / "w.key",
                          "--log-key", data / "log.pub", "--state", d / "wstate")
    server, base = start("serve", "--data", data, "--listen", "127.0.0.1:0",
                         "--witness", f"{wurl}={d / 'w.pub'}", "--log-interval", "200ms")
    try:
        token = (data / "admin.token").read_text().strip()
        post_json(base + "/api/v1/sets", token,
                  {"name": "py", "durations": ["1s"], "rate": 100000.0})
        set_json = get(base + "/api/v1/sets/py")
        yield {"dir": d, "base": base, "set": set_json,
               "log_key": get(base + "/log/key").decode(),
               "witness": (d / "w.pub").read_text(),
               "institution": get(base + "/institution.pub")}
    finally:
        server.kill()
        witness.kill()


def submitted(service, text):
    doc = text.encode()
    bundle = submit.seal(doc, service["set"], str(service["dir"] / f"{len(text)}.ckpt"),
                         expect="1s").encode()
    sid = upload(service["base"], bundle, doc)
    return doc, receipt(service["base"], sid)


def test_a_receipt_checks_in_the_witnessed_log(service):
    doc, r = submitted(service, "a paper from python\n")
    inst, key, w = service["institution"], service["log_key"], service["witness"]
    checked = submit.check_receipt(r, inst, document=doc, log_key=key, witness_keys=[w])
    assert checked["valid"] and checked["authentic"], checked
    assert checked["log"]["origin"] == "py.example/log"
    assert [c["witness"] for c in checked["log"]["checkpoint"]["cosignatures"]] == ["w.example"]
    assert submit.check_receipt(r, inst, document=b"another", log_key=key)["valid"] is False
    # The receipt claims a log: without its key it is not believed.
    with pytest.raises(HourglassError, match="log"):
        submit.check_receipt(r, inst)
    # An altered receipt is not authentic.
    forged = r.replace(b"credited-ms: 1000", b"credited-ms: 9000")
    assert forged != r
    bad = submit.check_receipt(forged, inst, log_key=key)
    assert bad == {"valid": False, "authentic": False, "reason": bad["reason"]}
    with pytest.raises(ValueError):
        submit.check_receipt(r, inst, log_key=key, witness_keys=[w], witness_quorum=2)


def test_the_log_verifies_grows_and_is_searched(service):
    state = str(service["dir"] / "py.state")
    url, key = service["base"] + "/log", service["log_key"]
    doc, _ = submitted(service, "searched for\n")
    first = log.verify(url, key, state=state, witness_keys=[service["witness"]],
                       institution=service["institution"])
    assert first["valid"], first
    assert first["previous"] is None
    size = first["checkpoint"]["size"]
    assert size == len(first["new_entries"]) >= 1
    assert all(e["type"] == "receipt" and e["signed_by_institution"] for e in first["new_entries"])
    submitted(service, "one more\n")
    second = log.verify(url, key, state=state)
    assert second["valid"] and second["previous"]["size"] == size
    assert [e["index"] for e in second["new_entries"]] == list(range(size, second["checkpoint"]["size"]))
    found = log.search(url, key, document=doc)
    assert [e["type"] for e in found["found"]] == ["receipt"]
    assert log.search(url, key, set="py")["entries_read"] == second["checkpoint"]["size"]
    # Another log's key: not a valid log.
    other = run("log", "keygen", "--role", "log", "--name", "py.example/log",
                "-o", service["dir"] / "other.key").strip()
    refused = log.verify(url, other)
    assert refused["valid"] is False and "not signed" in refused["reason"]
