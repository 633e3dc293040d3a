"""An independent check of RFC 6962 / RFC 9162 proofs and C2SP checkpoints, written from the
texts alone (RFC 9162 sections 2.1.3.2 and 2.1.4.2; C2SP tlog-checkpoint, signed-note,
tlog-cosignature, tlog-witness for the empty tree) with Python's hashlib and the
`cryptography` package's Ed25519: guards the Rust side against a self-consistent mistake.

Usage: tlog_proofs.py < CASES.json
CASES is a JSON list (entries in hex, hashes in base64); each case is one of
  {"kind": "root", "entries": [HEX...], "root": B64}
  {"kind": "inclusion", "index": I, "size": N, "entry": HEX, "proof": [B64...], "root": B64}
  {"kind": "consistency", "old_size": M, "old_root": B64, "size": N, "root": B64,
   "proof": [B64...]}
  {"kind": "checkpoint", "note": TEXT, "log_key": VKEY, "witness_keys": [VKEY...]}
Prints a JSON list with one answer per case: true or false for the first three; for a
checkpoint, false or {"size": N, "root": B64, "cosigned_by": [NAME...]} (the witnesses whose
cosignature verifies). Exits non-zero only for input it cannot read.
"""

import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def h(data):
    return hashlib.sha256(data).digest()


def node(left, right):
    return h(b"\x01" + left + right)


def leaf(entry):
    return h(b"\x00" + entry)


def mth(leaves):
    """RFC 9162 section 2.1.1: the Merkle Tree Hash of a list of leaf hashes."""
    if not leaves:
        return h(b"")
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node(mth(leaves[:k]), mth(leaves[k:]))


def verify_inclusion(index, size, leaf_hash, proof, root):
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(m, first, n, second, proof):
    """RFC 9162 section 2.1.4.2; the empty tree is a prefix of any tree with an empty proof
    (tlog-witness), and equal sizes need equal roots and an empty proof."""
    if m > n:
        return False
    if m == n:
        return not proof and first == second
    if m == 0:
        return not proof
    if not proof:
        return False
    if m & (m - 1) == 0:
        proof = [first] + proof
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node(c, fr)
            sr = node(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first and sr == second and sn == 0


def parse_key(vkey):
    """A signed-note verifier key: NAME+HEXID+BASE64(type || Ed25519 public key)."""
    name, key_id, b64 = vkey.strip().split("+", 2)
    key = base64.b64decode(b64, validate=True)
    assert len(key) == 33 and key[0] in (0x01, 0x04), "not an Ed25519 note or cosignature key"
    assert h(name.encode() + b"\n" + key)[:4].hex() == key_id, "key id"
    return name, bytes.fromhex(key_id), key[0], Ed25519PublicKey.from_public_bytes(key[1:])


def ed25519_ok(public, signature, message):
    try:
        public.verify(signature, message)
        return True
    except InvalidSignature:
        return False


def verify_checkpoint(note, log_key, witness_keys):
    """C2SP signed-note and tlog-checkpoint: the log's Ed25519 signature over the text; C2SP
    tlog-cosignature/v1: each witness's signature over "cosignature/v1", its time and the text.
    A checkpoint of size 0 must carry the empty tree's root."""
    if "\n\n" not in note:
        return False
    text, sigs = note.split("\n\n", 1)
    text += "\n"
    lines = text.split("\n")
    origin, size, root_b64 = lines[0], lines[1], lines[2]
    if str(int(size)) != size:
        return False
    size = int(size)
    root = base64.b64decode(root_b64, validate=True)
    if size == 0 and root != h(b""):
        return False
    name, key_id, _, public = parse_key(log_key)
    if origin != name:
        return False
    witnesses = [parse_key(k) for k in witness_keys]
    signed, cosigned = False, []
    for line in sigs.splitlines():
        if not line.startswith("\u2014 "):
            return False
        signer, b64 = line[2:].split(" ")
        raw = base64.b64decode(b64, validate=True)
        if signer == name and raw[:4] == key_id:
            if not ed25519_ok(public, raw[4:], text.encode()):
                return False
            signed = True
        for w_name, w_id, w_type, w_public in witnesses:
            if signer == w_name and raw[:4] == w_id and w_type == 0x04 and len(raw) == 76:
                time = int.from_bytes(raw[4:12], "big")
                message = b"cosignature/v1\ntime %d\n" % time + text.encode()
                if ed25519_ok(w_public, raw[12:], message):
                    cosigned.append(w_name)
    if not signed:
        return False
    return {"size": size, "root": root_b64, "cosigned_by": sorted(set(cosigned))}


def hashes(items):
    return [base64.b64decode(x, validate=True) for x in items]


def answer(case):
    kind = case["kind"]
    if kind == "root":
        leaves = [leaf(bytes.fromhex(e)) for e in case["entries"]]
        return mth(leaves) == base64.b64decode(case["root"])
    if kind == "inclusion":
        return verify_inclusion(
            case["index"],
            case["size"],
            leaf(bytes.fromhex(case["entry"])),
            hashes(case["proof"]),
            base64.b64decode(case["root"]),
        )
    if kind == "consistency":
        return verify_consistency(
            case["old_size"],
            base64.b64decode(case["old_root"]),
            case["size"],
            base64.b64decode(case["root"]),
            hashes(case["proof"]),
        )
    if kind == "checkpoint":
        return verify_checkpoint(case["note"], case["log_key"], case["witness_keys"])
    raise ValueError("unknown case kind " + kind)


def main():
    print(json.dumps([answer(c) for c in json.load(sys.stdin)]))


if __name__ == "__main__":
    main()
