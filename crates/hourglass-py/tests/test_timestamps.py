"""RFC 3161 timestamps in ``hourglass.submit.verify``: tokens made by OpenSSL's TSA (``openssl ts
-reply``, with a CA and a TSA certificate OpenSSL makes here) date a bundle, exactly as the CLI's
``submit verify --timestamp --tsa-ca`` does; a token over other bytes, or a CA that is not the
token's, makes the verdict invalid and names the token; bad arguments raise.

Run by scripts/test.sh (pytest, with HOURGLASS_BIN naming the CLI built by the test run); needs
``openssl`` on PATH.
"""

import json
import os
import shutil
import subprocess
import time
from datetime import datetime, timezone

import pytest

from hourglass import HourglassError, submit


def cli():
    exe = os.environ.get("HOURGLASS_BIN") or shutil.which("hourglass")
    if not exe:
        pytest.fail("the hourglass command line is needed (set HOURGLASS_BIN or put it on PATH)")
    return exe


def openssl(cwd, *args):
    exe = shutil.which("openssl")
    if not exe:
        pytest.fail("the openssl command line is needed (apt-get install openssl)")
    out = subprocess.run([exe, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"openssl {' '.join(map(str, args))}: {out.stderr}"
    return out.stdout


# A CA and a TSA for OpenSSL: the TSA certificate's extendedKeyUsage is timeStamping only, and
# critical (RFC 3161 section 2.3); the TSA signs SHA-256 imprints with ESS signing-certificate v2.
CONFIG = """
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ tsa_ext ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ tsa ]
default_tsa = tsa1
[ tsa1 ]
serial = ./serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def make_ca(d, name, cn):
    openssl(d, "req", "-x509", "-config", "openssl.cnf", "-extensions", "ca_ext", "-newkey", "rsa:2048",
            "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "30", "-subj", f"/CN={cn}")
    return (d / f"{name}.pem").read_bytes()


class Tsa:
    """OpenSSL's TSA `CN=name` with its own CA `CN=name CA`, in a directory of its own."""

    def __init__(self, d, name="OpenSSL test TSA"):
        self.dir = d
        d.mkdir()
        (d / "openssl.cnf").write_text(CONFIG)
        (d / "serial").write_text("01\n")
        self.ca_pem = make_ca(d, "ca", f"{name} CA")
        openssl(d, "req", "-new", "-config", "openssl.cnf", "-newkey", "rsa:2048", "-nodes", "-keyout", "tsa.key",
                "-out", "tsa.csr", "-subj", f"/CN={name}")
        openssl(d, "x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2",
                "-days", "30", "-extfile", "openssl.cnf", "-extensions", "tsa_ext", "-out", "tsa.pem")
        openssl(d, "x509", "-in", "ca.pem", "-outform", "DER", "-out", "ca.der")
        self.ca_der = (d / "ca.der").read_bytes()

    def says(self, reply):
        """What OpenSSL reads in one of its replies: (serial number, genTime in seconds)."""
        (self.dir / "said.tsr").write_bytes(reply)
        text = openssl(self.dir, "ts", "-reply", "-in", "said.tsr", "-text")
        fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
        when = datetime.strptime(fields["Time stamp"], "%b %d %H:%M:%S %Y GMT").replace(tzinfo=timezone.utc)
        return int(fields["Serial number"], 16), int(when.timestamp())

    def stamp(self, data, name, token_only=False):
        """OpenSSL's reply (.tsr), or bare token, over `data`."""
        (self.dir / f"{name}.data").write_bytes(data)
        openssl(self.dir, "ts", "-query", "-data", f"{name}.data", "-sha256", "-cert", "-out", f"{name}.tsq")
        openssl(self.dir, "ts", "-reply", "-config", "openssl.cnf", "-queryfile", f"{name}.tsq", "-inkey", "tsa.key",
                "-signer", "tsa.pem", "-chain", "ca.pem", "-out", f"{name}.tsr",
                *(["-token_out"] if token_only else []))
        return (self.dir / f"{name}.tsr").read_bytes()


@pytest.fixture(scope="module")
def stamped(tmp_path_factory):
    """A bundle sealed against a public set on RSA-2048, OpenSSL's TSA, its reply over the bundle
    and the wall-clock seconds around the stamping."""
    d = tmp_path_factory.mktemp("timestamps")
    doc = b"the paper, stamped by a TSA\n"
    (d / "paper.txt").write_bytes(doc)
    subprocess.run([cli(), "submit", "new-set", "--public", "--modulus", "rsa-2048", "--durations", "1s", "--rate",
                    "20000", "-o", str(d / "pub"), "--quiet"], check=True)
    set_text = (d / "pub" / "set.json").read_text()
    bundle = submit.seal(doc, set_text, str(d / "b.ckpt"), expect=1).encode()
    (d / "paper.bundle").write_bytes(bundle)
    tsa = Tsa(d / "tsa")
    before = int(time.time())
    reply = tsa.stamp(bundle, "paper")
    after = int(time.time()) + 1
    return {"dir": d, "doc": doc, "set": set_text, "bundle": bundle, "tsa": tsa, "reply": reply,
            "window": (before, after)}


def unix(rfc3339):
    return int(datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


def test_an_openssl_timestamp_dates_the_bundle_as_the_cli_does(stamped):
    s, tsa = stamped, stamped["tsa"]
    v = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[s["reply"]], tsa_cas=[tsa.ca_pem])
    assert v["valid"], v
    assert v["received_from"] == "timestamps"
    received = unix(v["received"])
    assert s["window"][0] <= received <= s["window"][1], (v["received"], s["window"])
    assert unix(v["predated_to"]) <= received - 1, v
    [t] = v["timestamps"]
    assert t["name"] == "timestamps[0]"
    assert t["tsa"] == "CN=OpenSSL test TSA" and t["anchor"] == "CN=OpenSSL test TSA CA", t
    assert t["policy"] == "1.2.3.4.1" and t["hash"] == "SHA-256", t
    # Received is the latest time the token proves: genTime plus OpenSSL's 1 s accuracy.
    assert t["accuracy"] == 1.0 and t["latest"] == v["received"], t
    assert unix(t["latest"]) == unix(t["gen_time"]) + 1, t
    assert (int(t["serial"], 16), unix(t["gen_time"])) == tsa.says(s["reply"]), t

    # The CLI's verdict on the same files: the same date, the same timestamp (named by its file).
    d = s["dir"]
    (d / "paper.tsr").write_bytes(s["reply"])
    out = subprocess.run([cli(), "submit", "verify", "--public", str(d / "paper.bundle"), "--document",
                          str(d / "paper.txt"), "--set", str(d / "pub" / "set.json"), "--timestamp",
                          str(d / "paper.tsr"), "--tsa-ca", str(tsa.dir / "ca.pem"), "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    c = json.loads(out.stdout)
    for key in ("valid", "received", "credited_ms", "predated_to", "reason", "received_from"):
        assert c[key] == v[key], (key, c[key], v[key])
    assert [dict(x, name=None) for x in c["timestamps"]] == [dict(x, name=None) for x in v["timestamps"]]

    # A bare token, the CA in DER, and a PEM file that holds another CA before the TSA's.
    token = tsa.stamp(s["bundle"], "paper-token", token_only=True)
    other = make_ca(tsa.dir, "unrelated", "An unrelated CA")
    for ca in (tsa.ca_der, other + tsa.ca_pem, (other + tsa.ca_pem).decode()):
        w = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[token], tsa_cas=[ca])
        assert w["valid"] and w["timestamps"][0]["anchor"] == "CN=OpenSSL test TSA CA", w

    # Two timestamps: received is the earlier.
    time.sleep(1.1)
    later = tsa.stamp(s["bundle"], "paper-later")
    w = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[later, s["reply"]], tsa_cas=[tsa.ca_pem])
    assert w["valid"] and w["received"] == v["received"], w
    assert [x["name"] for x in w["timestamps"]] == ["timestamps[0]", "timestamps[1]"]
    assert w["timestamps"][0]["gen_time"] > w["timestamps"][1]["gen_time"]


def test_a_timestamp_over_other_bytes_is_refused_naming_it(stamped):
    s, tsa = stamped, stamped["tsa"]
    other = tsa.stamp(s["bundle"] + b"\n", "edited-bundle")
    v = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[s["reply"], other], tsa_cas=[tsa.ca_pem])
    assert v["valid"] is False, v
    assert v["reason"].startswith("timestamp timestamps[1]: the token covers other data"), v["reason"]
    assert v["received"] is None and v["predated_to"] is None and v["received_from"] is None, v
    assert v["timestamps"] is None and v["credited_ms"] == 0 and v["credited_secs"] == 0, v
    # The bundle's own findings are kept: the refusal is the token's.
    assert v["document_matches"] and v["links"] and all(link["valid"] for link in v["links"]), v
    # The CLI refuses it with its invalid status and the same message.
    d = s["dir"]
    (d / "other.tsr").write_bytes(other)
    out = subprocess.run([cli(), "submit", "verify", "--public", str(d / "paper.bundle"), "--document",
                          str(d / "paper.txt"), "--set", str(d / "pub" / "set.json"), "--timestamp",
                          str(d / "other.tsr"), "--tsa-ca", str(tsa.dir / "ca.pem")],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "covers other data" in out.stderr, out


def test_a_ca_that_is_not_the_tokens_is_refused(stamped):
    s, tsa = stamped, stamped["tsa"]
    stranger = Tsa(s["dir"] / "stranger", "Stranger TSA")
    v = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[s["reply"]], tsa_cas=[stranger.ca_pem])
    assert v["valid"] is False, v
    assert v["reason"].startswith("timestamp timestamps[0]: the TSA certificate 'CN=OpenSSL test TSA' is not trusted"), v
    assert "its issuer 'CN=OpenSSL test TSA CA'" in v["reason"] and "CN=Stranger TSA CA" in v["reason"], v["reason"]
    assert v["received"] is None and v["timestamps"] is None and v["credited_ms"] == 0, v
    # A token of that other TSA, over this very bundle, against this TSA's CA.
    theirs = stranger.stamp(s["bundle"], "theirs")
    v = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[theirs], tsa_cas=[tsa.ca_pem])
    assert v["valid"] is False and v["reason"].startswith("timestamp timestamps[0]: "), v
    assert "'CN=Stranger TSA'" in v["reason"], v["reason"]
    # An impostor CA with the very names of this TSA's, but its own key.
    impostor = Tsa(s["dir"] / "impostor")
    v = submit.verify(s["bundle"], s["doc"], set=s["set"], timestamps=[s["reply"]], tsa_cas=[impostor.ca_pem])
    assert v["valid"] is False and "not trusted" in v["reason"], v


def test_bad_timestamp_arguments_raise(stamped):
    s, tsa = stamped, stamped["tsa"]
    args = (s["bundle"], s["doc"])
    with pytest.raises(ValueError, match="tsa_cas"):
        submit.verify(*args, set=s["set"], timestamps=[s["reply"]])
    with pytest.raises(ValueError, match="tsa_cas"):
        submit.verify(*args, set=s["set"], timestamps=[s["reply"]], tsa_cas=[])
    with pytest.raises(ValueError, match="not both"):
        submit.verify(*args, set=s["set"], timestamps=[s["reply"]], tsa_cas=[tsa.ca_pem],
                      received="2027-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="timestamps"):
        submit.verify(*args, set=s["set"], tsa_cas=[tsa.ca_pem])
    with pytest.raises(ValueError, match="empty"):
        submit.verify(*args, set=s["set"], timestamps=[], tsa_cas=[tsa.ca_pem])
    with pytest.raises(TypeError):
        submit.verify(*args, set=s["set"], timestamps=[s["reply"].hex()], tsa_cas=[tsa.ca_pem])
    # Bytes that are not a token, and a CA file that is not a CA certificate: errors, not verdicts.
    with pytest.raises(HourglassError, match=r"timestamps\[0\]"):
        submit.verify(*args, set=s["set"], timestamps=[b"not a token"], tsa_cas=[tsa.ca_pem])
    with pytest.raises(HourglassError, match=r"tsa_cas\[0\]"):
        submit.verify(*args, set=s["set"], timestamps=[s["reply"]], tsa_cas=[(tsa.dir / "tsa.pem").read_bytes()])
    # Without timestamps, received says where the date comes from.
    v = submit.verify(*args, set=s["set"], received="2027-01-01T00:00:00Z")
    assert v["received_from"] == "received" and v["timestamps"] is None and v["received"] == "2027-01-01T00:00:00Z"
    assert submit.verify(*args, set=s["set"])["received_from"] == "this machine's clock"
