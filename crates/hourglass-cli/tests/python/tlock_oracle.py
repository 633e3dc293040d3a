#!/usr/bin/env python3
"""Independent implementation of the hourglass time-lock file format (docs/FORMATS.md,
"Time-lock files"), written from the specification with pycryptodome's XChaCha20-Poly1305.

Usage:
    tlock_oracle.py open --in FILE.tlock --out FILE
        Parse and check the header, compute b = a^(2^t) mod n by Python's pow, recover K,
        decrypt and authenticate every STREAM chunk.
    tlock_oracle.py seal --like FILE.tlock --squarings T --in FILE --out FILE.tlock
        Seal FILE under the modulus of an existing file (no trapdoor is needed to seal when
        b = a^(2^T) mod n is computed directly, as it is here for a small T).

Exit status: 0 success, 1 authentication or format failure, 2 anything else (including a
missing library: run `bash scripts/setup-debian.sh`).
"""

import argparse
import hashlib
import os
import sys

MAGIC = b"HGTLOCK\0"
CHUNK = 1 << 16
TAG = 16


def fail(message, code=1):
    print(f"tlock_oracle: {message}", file=sys.stderr)
    sys.exit(code)


try:
    from Crypto.Cipher import ChaCha20_Poly1305
except ImportError:
    fail("pycryptodome is missing; run `bash scripts/setup-debian.sh`", 2)


def parse_header(data):
    if data[:8] != MAGIC:
        fail("wrong magic")
    version = int.from_bytes(data[8:10], "big")
    if version not in (1, 2):
        fail("unsupported version")
    t = int.from_bytes(data[10:18], "big")
    length = int.from_bytes(data[18:26], "big")
    k = int.from_bytes(data[26:28], "big")
    h = 28 + 3 * k + 19 + 32
    if len(data) < h:
        fail("truncated header")
    if hashlib.sha256(data[: h - 32]).digest() != data[h - 32 : h]:
        fail("header checksum mismatch")
    field = lambda i: int.from_bytes(data[28 + i * k : 28 + (i + 1) * k], "big")
    n, a, c_k = field(0), field(1), field(2)
    nonce = data[28 + 3 * k : 28 + 3 * k + 19]
    if not (1 <= t <= 1 << 60) or n % 2 == 0 or not (1 < a < n - 1) or c_k >= n:
        fail("header field out of range")
    return dict(t=t, length=None if length == 2**64 - 1 else length, k=k, n=n, a=a,
                c_k=c_k, nonce=nonce, header=data[:h], version=version)


def cipher(key, nonce, counter, last):
    return ChaCha20_Poly1305.new(
        key=key, nonce=nonce + counter.to_bytes(4, "big") + (b"\x01" if last else b"\x00"))


def open_file(data):
    hd = parse_header(data)
    b = pow(hd["a"], 1 << hd["t"], hd["n"])
    k_int = (hd["c_k"] - b) % hd["n"]
    if k_int >= 1 << 256:
        fail("key out of range")
    key = k_int.to_bytes(32, "big")
    body = data[len(hd["header"]):]
    if hd["version"] >= 2:
        # Version 2 ends with SHA-256 of everything before it.
        if len(body) < 32 or hashlib.sha256(data[:-32]).digest() != data[-32:]:
            fail("trailer mismatch")
        body = body[:-32]
    units = [body[i : i + CHUNK + TAG] for i in range(0, len(body), CHUNK + TAG)] or [b""]
    out = []
    for i, unit in enumerate(units):
        if len(unit) < TAG:
            fail("truncated chunk")
        c = cipher(key, hd["nonce"], i, i == len(units) - 1)
        c.update(hd["header"])
        try:
            out.append(c.decrypt_and_verify(unit[:-TAG], unit[-TAG:]))
        except ValueError:
            fail("chunk does not authenticate")
    content = b"".join(out)
    if hd["length"] is not None and hd["length"] != len(content):
        fail("length mismatch")
    return content


def seal_file(like, t, content):
    hd = parse_header(like)
    n, k = hd["n"], hd["k"]
    while True:
        a = int.from_bytes(os.urandom(k), "big") % n
        if 1 < a < n - 1:
            break
    key = os.urandom(32)
    c_k = (int.from_bytes(key, "big") + pow(a, 1 << t, n)) % n
    nonce = os.urandom(19)
    header = (MAGIC + (2).to_bytes(2, "big") + t.to_bytes(8, "big")
              + len(content).to_bytes(8, "big") + k.to_bytes(2, "big")
              + n.to_bytes(k, "big") + a.to_bytes(k, "big") + c_k.to_bytes(k, "big") + nonce)
    header += hashlib.sha256(header).digest()
    chunks = [content[i : i + CHUNK] for i in range(0, len(content), CHUNK)] or [b""]
    out = [header]
    for i, chunk in enumerate(chunks):
        c = cipher(key, nonce, i, i == len(chunks) - 1)
        c.update(header)
        ct, tag = c.encrypt_and_digest(chunk)
        out.append(ct + tag)
    sealed = b"".join(out)
    return sealed + hashlib.sha256(sealed).digest()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["open", "seal"])
    p.add_argument("--in", dest="inp", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--like")
    p.add_argument("--squarings", type=int)
    args = p.parse_args()
    with open(args.inp, "rb") as f:
        data = f.read()
    if args.command == "open":
        result = open_file(data)
    else:
        with open(args.like, "rb") as f:
            result = seal_file(f.read(), args.squarings, data)
    with open(args.out, "wb") as f:
        f.write(result)


if __name__ == "__main__":
    main()
