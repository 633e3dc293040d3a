"""One verdict on every surface. Bundles: a corpus of bundles (valid private and public ones, open-ended,
every tampering class the other tests know, mixed hashes, a relabelled origin, non-canonical hex,
more credit than the time since 1970) verified by the CLI (``submit verify --json``), by the
service over HTTP (``hourglass serve`` on loopback, the sets imported into it) and by this
package. The verdict, the credited time and the reason are identical on all three, or all three
refuse with the library's same message. Timestamps: the service's tokens (in its receipts and
at ``/api/v1/submissions/ID/timestamp``), checked by ``hourglass timestamp verify``, by
``hourglass.timestamp.verify`` and by the receipt checks of both, give one verdict and one
latest time, which is the service's own ``received``; a tampered token is refused alike.

Run by scripts/test.sh (pytest, with HOURGLASS_BIN naming the CLI built by the test run).
"""

import copy
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from hourglass import HourglassError, log, submit, timestamp, vdf


def cli_path():
    exe = os.environ.get("HOURGLASS_BIN") or shutil.which("hourglass")
    if not exe:
        pytest.fail("the hourglass command line is needed (set HOURGLASS_BIN or put it on PATH)")
    return exe


def run(*args, check=True):
    out = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and out.returncode != 0:
        raise AssertionError(f"hourglass {' '.join(map(str, args))}: {out.returncode}\n{out.stderr}")
    return out


# The service --------------------------------------------------------------------------------

class Server:
    """`hourglass serve` on loopback, stopped at the end of the test."""

    def __init__(self, data):
        self.proc = subprocess.Popen(
            [cli_path(), "serve", "--data", str(data), "--listen", "127.0.0.1:0", "--rate-limit", "0",
             "--workers", "2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "RUST_LOG": "warn", "HOURGLASS_STATE_DIR": str(data / "state")})
        found = {}
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                m = re.search(r"listening on (\S+)", line)
                if m and not ready.is_set():
                    found["base"] = m.group(1)
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(60) or "base" not in found:
            self.stop()
            pytest.fail("hourglass serve did not start")
        self.base = found["base"] if found["base"].startswith("http") else "http://" + found["base"]
        self.token = (data / "admin.token").read_text().strip()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def request(self, method, path, body=None, headers=None):
        req = urllib.request.Request(self.base + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def import_set(self, name, set_json, keys=None):
        body = {"name": name, "set": json.loads(set_json)}
        if keys is not None:
            body["keys"] = [json.loads(k) for k in keys]
        return self.request("POST", "/api/v1/sets/import", json.dumps(body).encode(),
                            {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"})

    def verify(self, bundle, document):
        """The service's verdict on an upload: ("verdict", valid, credited_ms, reason) or
        ("refused", message)."""
        boundary = uuid.uuid4().hex
        parts = []
        for name, data in (("bundle", bundle.encode()), ("document", document)):
            parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; "
                         f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n".encode())
            parts.append(data + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        status, body = self.request("POST", "/api/v1/submissions", b"".join(parts),
                                    {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        if status != 202:
            return ("refused", status, body["error"])
        deadline = time.time() + 120
        while time.time() < deadline:
            status, v = self.request("GET", f"/api/v1/submissions/{body['id']}")
            if v["status"] in ("valid", "invalid"):
                return ("verdict", v["status"] == "valid", round(v["credited_secs"] * 1000), v.get("reason"))
            if v["status"] == "error":
                pytest.fail(f"the service could not verify: {v}")
            time.sleep(0.05)
        pytest.fail("the service did not verify in time")


# The corpus ---------------------------------------------------------------------------------

def fingerprint(set_obj):
    """A public set's fingerprint, as docs/FORMATS.md section 12.10 defines it."""
    h = hashlib.sha256()

    def field(b):
        h.update(struct.pack(">I", len(b)) + b)

    n = int(set_obj["n"], 16)
    field(b"hourglass-public-set-v2")
    field(set_obj["name"].encode())
    field(n.to_bytes((n.bit_length() + 7) // 8, "big"))
    field(json.dumps(set_obj["origin"], separators=(",", ":")).encode())
    field(b"".join(struct.pack(">Q", t) for t in set_obj["squarings"]))
    field(struct.pack(">d", set_obj["rate"]))
    field(bytes([1 if set_obj["rate_measured"] else 0]))
    field(set_obj["hash"].encode())
    field(set_obj["proof"].encode())
    field(struct.pack(">I", set_obj["security_bits"]))
    field(set_obj["created"].encode())
    return h.hexdigest()


def edit(bundle, change):
    b = json.loads(bundle)
    change(b)
    return json.dumps(b, indent=2)


def other_digit(hexstr, at=-1):
    """`hexstr` with one digit changed (still lowercase, no new leading zero)."""
    i = at % len(hexstr)
    d = "1" if hexstr[i] != "1" else "2"
    return hexstr[:i] + d + hexstr[i + 1:]


class Corpus:
    def __init__(self, tmp):
        self.tmp = tmp
        self.doc = b"the paper, final version\n"
        (tmp / "paper.txt").write_bytes(self.doc)
        self.other_doc = b"the paper, edited after the deadline\n"
        self.sets = {}      # name -> (kind, set json text, key texts or None, set path, keys dir)
        self.cases = []     # (label, set name, bundle text, document)

    def private_set(self, name, hash_name="sha256"):
        out = self.tmp / name
        run("submit", "new-set", "--durations", "2s,1s", "--rate", "20000", "--bits", "1024", "--hash", hash_name,
            "--name", name, "-o", out, "--quiet", "--seed", name)
        keys = sorted(p.read_text() for p in out.glob("*.key"))
        self.sets[name] = ("private", (out / "set.json").read_text(), keys, out / "set.json", out)

    def public_set(self, name, *extra, durations="2s,1s", rate="20000"):
        out = self.tmp / name
        run("submit", "new-set", "--public", "--durations", durations, "--rate", rate, "--name", name, "-o", out,
            "--quiet", *extra)
        self.sets[name] = ("public", (out / "set.json").read_text(), None, out / "set.json", None)

    def relabelled(self, name, source):
        """`source`'s set with its origin relabelled as a committee's, fingerprint recomputed:
        what an institution that knows the factors would publish."""
        s = json.loads(self.sets[source][1])
        s["name"] = name
        s["origin"] = {"kind": "dkg", "committee": "cluster 'conf-2027', members [1, 2, 3]",
                       "transcript": "ab" * 32}
        s["fingerprint"] = fingerprint(s)
        path = self.tmp / f"{name}.json"
        path.write_text(json.dumps(s, indent=2) + "\n")
        self.sets[name] = ("public", path.read_text(), None, path, None)

    def seal(self, set_name, *extra, document=None):
        document = document or self.doc
        doc_path = self.tmp / f"doc-{uuid.uuid4().hex}.txt"
        doc_path.write_bytes(document)
        bundle = self.tmp / f"{uuid.uuid4().hex}.bundle"
        run("submit", "seal", "--set", self.sets[set_name][3], "-i", doc_path, "-o", bundle, "--quiet", *extra)
        return bundle.read_text()

    def add(self, label, set_name, bundle, document=None):
        self.cases.append((label, set_name, bundle, document if document is not None else self.doc))


def build(tmp):
    c = Corpus(tmp)
    c.private_set("priv")
    c.private_set("priv512", "sha512")
    c.public_set("wes", "--modulus", "rsa-2048")
    c.public_set("pie", "--modulus", "rsa-2048", "--proof", "pietrzak")
    run("rsa", "keygen", "--bits", "2048", "-o", tmp / "inst.key", "--seed", "institution")
    run("rsa", "pubkey", "-i", tmp / "inst.key", "-o", tmp / "inst.pub")
    c.public_set("inst", "--modulus", tmp / "inst.pub")
    c.public_set("slow", "--modulus", "rsa-2048", durations="100years", rate="1e-9")
    c.relabelled("relabelled", "inst")

    # Private set: valid chains, open-ended, and every tampering.
    p = c.seal("priv", "--expect", "3s", "--until", "3s")
    c.add("private: valid", "priv", p)
    c.add("private: another document", "priv", p, c.other_doc)
    c.add("private: altered c", "priv", edit(p, lambda b: b["links"][1].update(c=other_digit(b["links"][1]["c"]))))
    c.add("private: altered first c", "priv", edit(p, lambda b: b["links"][0].update(c=other_digit(b["links"][0]["c"], 3))))
    c.add("private: t edited", "priv", edit(p, lambda b: b["links"][0].update(t=b["links"][0]["t"] + 1)))
    c.add("private: links swapped", "priv", edit(p, lambda b: b["links"].reverse()))
    c.add("private: last link dropped", "priv", edit(p, lambda b: b["links"].pop()))
    c.add("private: first link repeated", "priv", edit(p, lambda b: b["links"].insert(1, copy.deepcopy(b["links"][0]))))
    c.add("private: unknown key in link 2", "priv", edit(p, lambda b: b["links"][1].update(puzzle="cd" * 32)))
    c.add("private: names sha512", "priv", edit(p, lambda b: b.update(
        hash="sha512", digest=hashlib.sha512(c.doc).hexdigest())))
    c.add("private: uppercase c", "priv", edit(p, lambda b: b["links"][0].update(c=b["links"][0]["c"].upper())))
    c.add("private: leading zero in c", "priv", edit(p, lambda b: b["links"][1].update(c="0" + b["links"][1]["c"])))
    c.add("private: uppercase puzzle", "priv", edit(p, lambda b: b["links"][1].update(puzzle=b["links"][1]["puzzle"].upper())))
    c.add("private: uppercase digest", "priv", edit(p, lambda b: b.update(digest=b["digest"].upper())))
    c.add("private: c not hex", "priv", edit(p, lambda b: b["links"][0].update(c="not-hex")))
    c.add("private: claims a public set", "priv", edit(p, lambda b: b.update(set="public")))
    c.add("private: unknown field", "priv", edit(p, lambda b: b.update(extra=1)))
    c.add("private: version 1", "priv", edit(p, lambda b: b.update(version=1)))
    c.add("private: no links", "priv", edit(p, lambda b: b.update(links=[])))
    o = c.seal("priv", "--open-ended", "--until", "2s")
    c.add("private: open-ended", "priv", o)
    c.add("private: open-ended t edited", "priv", edit(o, lambda b: b["links"][0].update(t=b["links"][0]["t"] - 1)))
    c.add("private: open-ended c edited", "priv", edit(o, lambda b: b["links"][0].update(c=other_digit(b["links"][0]["c"]))))

    # Public set (Wesolowski): valid and every tampering.
    w = c.seal("wes", "--expect", "3s", "--until", "3s")
    c.add("public: valid", "wes", w)
    c.add("public: another document", "wes", w, c.other_doc)
    c.add("public: altered y", "wes", edit(w, lambda b: b["links"][0].update(y=other_digit(b["links"][0]["y"]))))
    c.add("public: altered pi", "wes", edit(w, lambda b: b["links"][1]["proof"].update(pi=other_digit(b["links"][1]["proof"]["pi"]))))
    c.add("public: altered l", "wes", edit(w, lambda b: b["links"][1]["proof"].update(l=other_digit(b["links"][1]["proof"]["l"]))))
    c.add("public: links swapped", "wes", edit(w, lambda b: b["links"].reverse()))
    c.add("public: t four times", "wes", edit(w, lambda b: b["links"][1].update(t=b["links"][1]["t"] * 4)))
    inst_fp = json.loads(c.sets["inst"][1])["fingerprint"]
    c.add("public: link of another set", "wes", edit(w, lambda b: b["links"][1].update(puzzle=inst_fp)))
    c.add("public: names sha512", "wes", edit(w, lambda b: b.update(
        hash="sha512", digest=hashlib.sha512(c.doc).hexdigest())))
    c.add("public: uppercase y", "wes", edit(w, lambda b: b["links"][0].update(y=b["links"][0]["y"].upper())))
    c.add("public: leading zero in pi", "wes", edit(w, lambda b: b["links"][0]["proof"].update(pi="0" + b["links"][0]["proof"]["pi"])))
    c.add("public: claims a private set", "wes", edit(w, lambda b: b.update(set="private")))

    # Pietrzak.
    q = c.seal("pie", "--expect", "1s", "--until", "1s")
    c.add("pietrzak: valid", "pie", q)
    c.add("pietrzak: altered mu", "pie", edit(q, lambda b: b["links"][0]["proof"]["mu"].__setitem__(
        0, other_digit(b["links"][0]["proof"]["mu"][0]))))
    pie_fp = json.loads(c.sets["pie"][1])["fingerprint"]
    c.add("pietrzak: a Wesolowski proof", "pie", edit(w, lambda b: [l.update(puzzle=pie_fp) for l in b["links"]]))
    c.add("pietrzak: 65 elements", "pie", edit(q, lambda b: b["links"][0]["proof"].update(
        mu=b["links"][0]["proof"]["mu"] * 65)))

    # The institution's own modulus: valid, but not trustless; and tampered.
    i = c.seal("inst", "--expect", "1s", "--until", "1s")
    c.add("institution modulus: valid", "inst", i)
    c.add("institution modulus: altered y", "inst", edit(i, lambda b: b["links"][0].update(y=other_digit(b["links"][0]["y"]))))

    # More credit than the time since 1970.
    c.add("huge credit: valid", "slow", c.seal("slow", "--expect", "100years", "--until", "100years"))
    return c


# The surfaces -------------------------------------------------------------------------------

def cli_verdict(corpus, set_name, bundle, document):
    kind, _, _, set_path, keys_dir = corpus.sets[set_name]
    b = corpus.tmp / f"v-{uuid.uuid4().hex}.bundle"
    b.write_text(bundle)
    d = corpus.tmp / f"v-{uuid.uuid4().hex}.txt"
    d.write_bytes(document)
    if kind == "private":
        out = run("submit", "verify", "--keys", keys_dir, "--document", d, b, "--json", check=False)
    else:
        out = run("submit", "verify", "--public", b, "--document", d, "--set", set_path, "--json", check=False)
    if out.returncode in (0, 1) and out.stdout.strip():
        v = json.loads(out.stdout)
        return ("verdict", v["valid"], v["credited_ms"], v["reason"])
    assert out.returncode == 2, f"{out.returncode}: {out.stderr}"
    return ("refused", out.stderr)


def python_verdict(corpus, set_name, bundle, document):
    kind, set_text, keys, _, _ = corpus.sets[set_name]
    try:
        if kind == "private":
            v = submit.verify(bundle, document, keys=keys)
        else:
            v = submit.verify(bundle, document, set=set_text)
    except HourglassError as e:
        return ("refused", str(e))
    return ("verdict", v["valid"], v["credited_ms"], v["reason"])


def assert_same(label, cli, py, srv):
    if py[0] == "verdict":
        assert cli == py, f"{label}: CLI {cli} != Python {py}"
        if srv is not None:
            assert srv == py, f"{label}: service {srv} != Python {py}"
    else:
        # The same refusal: the library's message, whatever each surface wraps around it.
        message = py[1]
        assert cli[0] == "refused" and message in cli[1], f"{label}: CLI {cli} vs Python {py}"
        if srv is not None:
            assert srv[0] == "refused" and srv[1] == 400 and message in srv[2], f"{label}: service {srv} vs {py}"


def test_one_verdict_on_the_cli_the_service_and_python(tmp_path):
    corpus = build(tmp_path)
    assert len(corpus.cases) >= 40, len(corpus.cases)
    server = Server(tmp_path / "srv")
    try:
        for name in ("priv", "priv512", "wes", "pie", "inst", "slow"):
            kind, text, keys, _, _ = corpus.sets[name]
            status, body = server.import_set(name, text, keys)
            assert status == 201, f"{name}: {body}"
        outcomes = {}
        for label, set_name, bundle, document in corpus.cases:
            cli = cli_verdict(corpus, set_name, bundle, document)
            py = python_verdict(corpus, set_name, bundle, document)
            srv = server.verify(bundle, document)
            assert_same(label, cli, py, srv)
            outcomes[label] = py
    finally:
        server.stop()

    # The corpus covers what it claims: valid bundles of every kind, invalid ones with reasons
    # naming the link, and refusals naming the field.
    for label in ("private: valid", "private: open-ended", "public: valid", "pietrzak: valid",
                  "institution modulus: valid", "huge credit: valid"):
        assert outcomes[label][1] is True, (label, outcomes[label])
    assert outcomes["private: valid"][2] == 3000
    assert outcomes["huge credit: valid"][2] > 2_000_000_000_000
    assert outcomes["private: altered c"][3].startswith("link 2:"), outcomes["private: altered c"]
    assert "document" in outcomes["public: another document"][3]
    assert "fixes pietrzak" in outcomes["pietrzak: a Wesolowski proof"][3]
    assert "another public set" in outcomes["public: link of another set"][3]
    for label in ("private: uppercase c", "private: leading zero in c", "public: uppercase y",
                  "public: leading zero in pi", "private: uppercase digest"):
        assert outcomes[label][0] == "refused" and "canonical" in outcomes[label][1], (label, outcomes[label])


def test_trust_refusals_are_the_same_on_every_surface(tmp_path):
    """A relabelled origin, and keys that fix different hashes: refused by the CLI, by Python and
    by the service (which will not import such a set), with the library's same message."""
    corpus = Corpus(tmp_path)
    corpus.private_set("priv")
    corpus.private_set("priv512", "sha512")
    run("rsa", "keygen", "--bits", "2048", "-o", tmp_path / "inst.key", "--seed", "institution")
    run("rsa", "pubkey", "-i", tmp_path / "inst.key", "-o", tmp_path / "inst.pub")
    corpus.public_set("inst", "--modulus", tmp_path / "inst.pub")
    corpus.relabelled("relabelled", "inst")
    bundle = corpus.seal("relabelled", "--expect", "1s", "--until", "1s")
    server = Server(tmp_path / "srv")
    try:
        # The relabelled origin: no verdict without the committee pinned.
        cli = cli_verdict(corpus, "relabelled", bundle, corpus.doc)
        py = python_verdict(corpus, "relabelled", bundle, corpus.doc)
        assert py[0] == "refused" and "pin the committee" in py[1], py
        assert cli[0] == "refused" and py[1] in cli[1], cli
        assert "--committee-cert" in cli[1], cli
        status, body = server.import_set("relabelled", corpus.sets["relabelled"][1])
        assert status == 400 and py[1] in body["error"], body

        # Keys that fix different hashes, in either order.
        keys = corpus.sets["priv"][2] + corpus.sets["priv512"][2]
        messages = []
        for order in (keys, list(reversed(keys))):
            with pytest.raises(HourglassError) as e:
                submit.verify(bundle, corpus.doc, keys=order)
            messages.append(str(e.value))
        assert "sha256" in messages[0] and "sha512" in messages[0], messages
        mixed = tmp_path / "mixed"
        mixed.mkdir()
        for i, k in enumerate(keys):
            (mixed / f"k{i}.key").write_text(k)
        out = run("submit", "verify", "--keys", mixed, "--document", tmp_path / "paper.txt", tmp_path / "paper.txt",
                  check=False)
        assert out.returncode == 2 and "sha256" in out.stderr and "sha512" in out.stderr, out.stderr
        status, body = server.import_set("mixed", corpus.sets["priv"][1], keys)
        assert status == 400 and "keys" in body["error"], body
    finally:
        server.stop()


def published(server, tmp_path, *names):
    """The service's published files (each also written to ``tmp_path``) and its log key
    (written as ``log.pub``)."""
    files = {}
    for name in names:
        with urllib.request.urlopen(server.base + "/" + name) as r:
            files[name] = r.read()
        (tmp_path / name).write_bytes(files[name])
    with urllib.request.urlopen(server.base + "/log/key") as r:
        log_key = r.read().decode().strip()
    (tmp_path / "log.pub").write_text(log_key + "\n")
    return files, log_key


def test_one_timestamp_verdict_on_the_cli_the_service_and_python(tmp_path):
    corpus = Corpus(tmp_path)
    corpus.private_set("priv")
    kind, text, keys, _, _ = corpus.sets["priv"]
    bundle = corpus.seal("priv", "--expect", "1s")
    server = Server(tmp_path / "srv")
    try:
        status, body = server.import_set("priv", text, keys)
        assert status == 201, body
        assert server.verify(bundle, corpus.doc)[1] is True
        # The submission's id, as docs/FORMATS.md section 17 defines it.
        sub_id = hashlib.sha256(
            b"hourglass-submission-id-v1\n" + hashlib.sha256(bundle.encode()).hexdigest().encode() + b"\n"
            + hashlib.sha256(corpus.doc).hexdigest().encode()).hexdigest()[:32]
        status, row = server.request("GET", f"/api/v1/submissions/{sub_id}")
        assert status == 200, row
        with urllib.request.urlopen(server.base + f"/api/v1/submissions/{sub_id}/timestamp") as r:
            token = r.read()
        files, log_key = published(server, tmp_path, "tsa-ca.pem", "tsa.pem", "institution.pub")
        deadline = time.time() + 60
        receipt = None
        while time.time() < deadline and receipt is None:
            try:
                with urllib.request.urlopen(server.base + f"/api/v1/submissions/{sub_id}/receipt") as r:
                    receipt = r.read()
            except urllib.error.HTTPError:
                time.sleep(0.1)
        assert receipt is not None
    finally:
        server.stop()
    (tmp_path / "t.tsr").write_bytes(token)
    (tmp_path / "b.bundle").write_text(bundle)
    (tmp_path / "receipt.json").write_bytes(receipt)

    # The token: one verdict from the CLI and from Python; its latest time is the service's
    # received time.
    py = timestamp.verify(token, [files["tsa-ca.pem"]], data=bundle.encode(), untrusted=[files["tsa.pem"]])
    cli = json.loads(run("timestamp", "verify", tmp_path / "t.tsr", "--data", tmp_path / "b.bundle",
                         "--tsa-ca", tmp_path / "tsa-ca.pem", "--untrusted", tmp_path / "tsa.pem",
                         "--json").stdout)
    assert py == cli and py["valid"] is True, (py, cli)
    assert py["latest"] == row["received"], (py, row)
    assert py["accuracy"] == 1.0

    # The receipt: the same checked receipt from both, dated by that token.
    c = json.loads(run("submit", "check-receipt", tmp_path / "receipt.json", "--institution",
                       tmp_path / "institution.pub", "--log-key", tmp_path / "log.pub", "--json").stdout)
    p = submit.check_receipt(receipt, files["institution.pub"], log_key=log_key)
    assert p["valid"] is True, p
    for key in ("received", "predated_to", "statement", "timestamp"):
        assert c[key] == p[key], (key, c[key], p[key])
    assert c["received"] == py["latest"] and c["timestamp"]["latest"] == py["latest"], c

    # A tampered token: refused alike (exit 1 and valid False, the same reason).
    bad = bytearray(token)
    bad[-1] ^= 1
    (tmp_path / "bad.tsr").write_bytes(bytes(bad))
    py = timestamp.verify(bytes(bad), [files["tsa-ca.pem"]], data=bundle.encode(), untrusted=[files["tsa.pem"]])
    out = run("timestamp", "verify", tmp_path / "bad.tsr", "--data", tmp_path / "b.bundle", "--tsa-ca",
              tmp_path / "tsa-ca.pem", "--untrusted", tmp_path / "tsa.pem", "--json", check=False)
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout) == py and py["valid"] is False, (out.stdout, py)


def submission_id(bundle, document):
    """A submission's id, as docs/FORMATS.md section 17 defines it."""
    return hashlib.sha256(
        b"hourglass-submission-id-v1\n" + hashlib.sha256(bundle.encode()).hexdigest().encode() + b"\n"
        + hashlib.sha256(document).hexdigest().encode()).hexdigest()[:32]


def fetch_receipt(server, sub_id):
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(server.base + f"/api/v1/submissions/{sub_id}/receipt") as r:
                return r.read()
        except urllib.error.HTTPError:
            time.sleep(0.1)
    pytest.fail("no receipt in time")


def cli_json(*args):
    """A verdict command's JSON and exit status (0 valid, 1 a negative verdict)."""
    out = run(*args, "--json", check=False)
    assert out.returncode in (0, 1), f"{out.returncode}: {out.stderr}"
    return json.loads(out.stdout), out.returncode


def test_receipts_log_audits_and_vdf_proofs_agree_on_every_surface(tmp_path):
    """The receipt's verdict, the log audit's and the VDF proof's are the libraries' JSON: the
    CLI prints them and Python returns them, equal key for key, the CLI's exit status says the
    same, and the service's own word (each submission's status, its log) agrees."""
    corpus = Corpus(tmp_path)
    corpus.private_set("priv")
    _, text, keys, _, _ = corpus.sets["priv"]
    good = corpus.seal("priv", "--expect", "1s")
    other_doc = b"not the sealed document\n"
    server = Server(tmp_path / "srv")
    try:
        status, body = server.import_set("priv", text, keys)
        assert status == 201, body
        # One valid submission, one the service finds invalid (the document is not the sealed one).
        assert server.verify(good, corpus.doc)[1] is True
        assert server.verify(good, other_doc)[1] is False
        receipts = {
            "valid": fetch_receipt(server, submission_id(good, corpus.doc)),
            "invalid": fetch_receipt(server, submission_id(good, other_doc)),
        }
        files, log_key = published(server, tmp_path, "institution.pub")
        stranger = run("log", "keygen", "--role", "log", "--name", "stranger.example/log",
                       "-o", tmp_path / "stranger.key").stdout.strip()
        (tmp_path / "stranger.pub").write_text(stranger + "\n")
        log_url = server.base + "/log"

        # Log audits: a first run, a run with the institution's key, another log's key.
        for label, extra, py_kwargs, key_file, key in (
            ("first run", [], {}, "log.pub", log_key),
            ("institution", ["--institution", tmp_path / "institution.pub"],
             {"institution": files["institution.pub"]}, "log.pub", log_key),
            ("another log's key", [], {}, "stranger.pub", stranger),
        ):
            state_cli, state_py = tmp_path / f"cli-{uuid.uuid4().hex}.state", tmp_path / f"py-{uuid.uuid4().hex}.state"
            c, code = cli_json("log", "verify", "--log", log_url, "--log-key", tmp_path / key_file,
                               "--state", state_cli, *extra)
            p = log.verify(log_url, key, state=str(state_py), **py_kwargs)
            assert c == p, f"{label}: CLI {c} != Python {p}"
            assert code == (0 if p["valid"] else 1), (label, code, p)
            # The state advances on both, or on neither.
            assert state_cli.exists() == state_py.exists() == p["valid"], label
        assert p["valid"] is False and "reason" in p
        # The audit lists both receipts, as the service logged them.
        audit = log.verify(log_url, log_key, institution=files["institution.pub"])
        entries = {e["submission"]: e for e in audit["new_entries"]}
        assert {e["verdict"] for e in entries.values()} >= {"valid", "invalid"}, audit
        assert all(e["signed_by_institution"] for e in entries.values()), audit
        found_cli, code = cli_json("log", "search", "--log", log_url, "--log-key", tmp_path / "log.pub",
                                   "--set", "priv")
        assert code == 0 and found_cli == log.search(log_url, log_key, set="priv"), found_cli
    finally:
        server.stop()

    # Receipts: valid, invalid, for another document, forged, under another institution's key.
    run("rsa", "keygen", "--bits", "2048", "-o", tmp_path / "other.key", "--pubout", tmp_path / "other.pub")
    forged = json.loads(receipts["valid"])
    sig = forged["signature"]
    forged["signature"] = sig[:5] + ("A" if sig[5] != "A" else "B") + sig[6:]
    forged = json.dumps(forged).encode()
    cases = [
        ("valid", receipts["valid"], None, "institution.pub", True),
        ("valid, its document", receipts["valid"], corpus.doc, "institution.pub", True),
        ("valid, another document", receipts["valid"], other_doc, "institution.pub", False),
        ("the service's invalid verdict", receipts["invalid"], other_doc, "institution.pub", False),
        ("forged signature", forged, None, "institution.pub", False),
        ("another institution's key", receipts["valid"], None, "other.pub", False),
    ]
    for label, receipt, document, inst, expected in cases:
        path = tmp_path / f"r-{uuid.uuid4().hex}.json"
        path.write_bytes(receipt)
        args = ["submit", "check-receipt", path, "--institution", tmp_path / inst, "--log-key", tmp_path / "log.pub"]
        if document is not None:
            d = tmp_path / f"d-{uuid.uuid4().hex}.txt"
            d.write_bytes(document)
            args += ["--document", d]
        c, code = cli_json(*args)
        p = submit.check_receipt(receipt, (tmp_path / inst).read_bytes(), document=document, log_key=log_key)
        assert c == p, f"{label}: CLI {c} != Python {p}"
        assert p["valid"] is expected and code == (0 if expected else 1), (label, code, p)
        if p["authentic"]:
            # The service's word: the receipt states the verdict the service gave.
            assert p["statement"]["verdict"] == ("valid" if receipt == receipts["valid"] else "invalid"), label

    # VDF proofs: valid, for another input, over another modulus, tampered.
    proof_path = tmp_path / "proof.json"
    run("vdf", "eval", "--input", "beacon 7", "--iterations", "2000", "-o", proof_path)
    proof = proof_path.read_text()
    tampered = json.loads(proof)
    tampered["output"] = other_digit(tampered["output"])
    (tmp_path / "tampered.json").write_text(json.dumps(tampered))
    vcases = [
        ("valid", proof_path, None),
        ("valid, its input", proof_path, "beacon 7"),
        ("another input", proof_path, "beacon 8"),
        ("tampered output", tmp_path / "tampered.json", None),
    ]
    for label, path, given in vcases:
        args = ["vdf", "verify", path] + (["--input", given] if given is not None else [])
        c, code = cli_json(*args)
        c.pop("verify_ms", None)
        p = vdf.check(path.read_text(), input=given)
        assert c == p, f"{label}: CLI {c} != Python {p}"
        assert code == (0 if p["valid"] else 1) and vdf.verify(path.read_text(), input=given) is p["valid"], label
    assert [vdf.check(p.read_text(), input=g)["valid"] for _, p, g in vcases] == [True, True, False, False]
