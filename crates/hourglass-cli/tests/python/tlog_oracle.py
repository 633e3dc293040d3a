"""An independent check of a tiled transparency log, written from the specs alone (C2SP
tlog-tiles, tlog-checkpoint, signed-note; RFC 6962), with Python's hashlib and the
`cryptography` package's Ed25519: guards the Rust side against a self-consistent mistake.

Usage: tlog_oracle.py PREFIX VERIFIER_KEY_FILE
Fetches PREFIX/checkpoint and every entry bundle of it (asking for gzip, as tlog-tiles says
a client may, and requiring the bundles gzip-encoded: a log SHOULD compress them), recomputes
the RFC 6962 root of the entries (the empty string's hash for size 0), checks the log's note
signature and key id, and prints a JSON line
{"size": N, "root": B64, "signature": true, "gzip": true, "entries": [sha256 hex of each entry]}.
Exits non-zero on any mismatch.
"""

import base64
import gzip
import hashlib
import json
import sys
import urllib.request

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def fetch(url, must_gzip=False):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as r:
        body = r.read()
        encoding = r.headers.get("Content-Encoding")
    if encoding == "gzip":
        return gzip.decompress(body)
    assert encoding is None, ("unknown Content-Encoding", encoding, url)
    assert not must_gzip, "an entry bundle was not gzip-encoded: " + url
    return body


def mth(leaves):
    """RFC 6962 section 2.1: the Merkle Tree Hash of a list of leaf hashes."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()


def tile_number(n):
    """x001/x234/067 for 1234067."""
    parts = ["%03d" % (n % 1000)]
    n //= 1000
    while n > 0:
        parts.insert(0, "x%03d" % (n % 1000))
        n //= 1000
    return "/".join(parts)


def main():
    prefix, key_file = sys.argv[1].rstrip("/"), sys.argv[2]
    name, key_id_hex, key_b64 = open(key_file).read().strip().split("+", 2)
    key = base64.b64decode(key_b64)
    assert key[0] == 0x01 and len(key) == 33, "not an Ed25519 note key"
    assert hashlib.sha256(name.encode() + b"\n" + key).digest()[:4].hex() == key_id_hex

    note = fetch(prefix + "/checkpoint").decode()
    text, sigs = note.split("\n\n", 1)
    text += "\n"
    origin, size, root_b64 = text.split("\n")[:3]
    assert origin == name, (origin, name)
    size = int(size)
    signed = False
    for line in sigs.splitlines():
        assert line.startswith("\u2014 ")
        signer, b64 = line[2:].split(" ")
        raw = base64.b64decode(b64)
        if signer == name and raw[:4].hex() == key_id_hex:
            Ed25519PublicKey.from_public_bytes(key[1:]).verify(raw[4:], text.encode())
            signed = True
    assert signed, "no signature by the log key"

    entries = []
    for n in range((size + 255) // 256):
        width = min(256, size - n * 256)
        path = "/tile/entries/" + tile_number(n) + ("" if width == 256 else ".p/%d" % width)
        bundle = fetch(prefix + path, must_gzip=True)
        at = 0
        for _ in range(width):
            length = int.from_bytes(bundle[at : at + 2], "big")
            entries.append(bundle[at + 2 : at + 2 + length])
            at += 2 + length
        assert at == len(bundle), "bytes after the last entry of " + path
    leaves = [hashlib.sha256(b"\x00" + e).digest() for e in entries]
    root = base64.b64encode(mth(leaves)).decode()
    assert root == root_b64, ("root", root, root_b64)
    print(
        json.dumps(
            {
                "size": size,
                "root": root,
                "signature": signed,
                "gzip": True,
                "entries": [hashlib.sha256(e).hexdigest() for e in entries],
            }
        )
    )


if __name__ == "__main__":
    main()
