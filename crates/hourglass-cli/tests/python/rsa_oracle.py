#!/usr/bin/env python3
"""Independent RSA implementation for hourglass's interoperability tests.

Usage:
    rsa_oracle.py LIB info    --key KEY
    rsa_oracle.py LIB encrypt --key PUB  --in MSG --out CT  [--hash H] [--label TEXT]
    rsa_oracle.py LIB decrypt --key KEY  --in CT  --out MSG [--hash H] [--label TEXT]
    rsa_oracle.py LIB sign    --key KEY  --in MSG --out SIG [--hash H] [--salt-len N]
    rsa_oracle.py LIB verify  --key PUB  --in MSG --sig SIG [--hash H] [--salt-len N]

LIB is `cryptography` (pyca, backed by OpenSSL) or `pycryptodome` (its own RSA code).
Keys are PEM files as hourglass writes them (PKCS#8 / SubjectPublicKeyInfo, or PKCS#1).
Encryption is RSAES-OAEP and signatures are RSASSA-PSS, with MGF1 over the same hash.
`info` prints `bits=N e_bits=M private=0|1` after the library's own consistency checks.

Exit status: 0 success, 1 verification or decryption failure, 2 anything else (including a
missing library: run `bash scripts/setup-debian.sh`).
"""

import argparse
import sys


def fail(message, code=2):
    print(f"rsa_oracle: {message}", file=sys.stderr)
    sys.exit(code)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Cryptography:
    def __init__(self, hash_name):
        try:
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding, rsa
        except ImportError as e:
            fail(f"python package 'cryptography' missing ({e}); run `bash scripts/setup-debian.sh`")
        self.hashes, self.serialization, self.padding, self.rsa = hashes, serialization, padding, rsa
        self.hash = {
            "sha1": hashes.SHA1,
            "sha256": hashes.SHA256,
            "sha384": hashes.SHA384,
            "sha512": hashes.SHA512,
        }[hash_name]()

    def load(self, path):
        data = read(path)
        if b"PRIVATE KEY" in data:
            return self.serialization.load_pem_private_key(data, password=None)
        return self.serialization.load_pem_public_key(data)

    def public(self, key):
        return key.public_key() if isinstance(key, self.rsa.RSAPrivateKey) else key

    def info(self, key):
        n = self.public(key).public_numbers()
        private = isinstance(key, self.rsa.RSAPrivateKey)
        return n.n.bit_length(), n.e.bit_length(), private

    def oaep(self, label):
        mgf = self.padding.MGF1(self.hash)
        return self.padding.OAEP(mgf=mgf, algorithm=self.hash, label=label)

    def encrypt(self, key, msg, label):
        return self.public(key).encrypt(msg, self.oaep(label))

    def decrypt(self, key, ct, label):
        try:
            return key.decrypt(ct, self.oaep(label))
        except ValueError:
            return None

    def pss(self, salt_len, verifying):
        if salt_len is None:
            salt_len = self.padding.PSS.AUTO if verifying else self.padding.PSS.DIGEST_LENGTH
        return self.padding.PSS(mgf=self.padding.MGF1(self.hash), salt_length=salt_len)

    def sign(self, key, msg, salt_len):
        return key.sign(msg, self.pss(salt_len, False), self.hash)

    def verify(self, key, msg, sig, salt_len):
        from cryptography.exceptions import InvalidSignature

        try:
            self.public(key).verify(sig, msg, self.pss(salt_len, True), self.hash)
            return True
        except InvalidSignature:
            return False


class PyCryptodome:
    def __init__(self, hash_name):
        try:
            from Crypto.Cipher import PKCS1_OAEP
            from Crypto.Hash import SHA1, SHA256, SHA384, SHA512
            from Crypto.PublicKey import RSA
            from Crypto.Signature import pss
            from Crypto.Signature.pss import MGF1
        except ImportError as e:
            fail(f"python package 'pycryptodome' missing ({e}); run `bash scripts/setup-debian.sh`")
        self.RSA, self.PKCS1_OAEP, self.pss_mod, self.MGF1 = RSA, PKCS1_OAEP, pss, MGF1
        self.hash = {"sha1": SHA1, "sha256": SHA256, "sha384": SHA384, "sha512": SHA512}[hash_name]

    def load(self, path):
        # import_key checks the key's consistency (n = p q, e d = 1 mod lcm, ...).
        return self.RSA.import_key(read(path))

    def info(self, key):
        return key.n.bit_length(), key.e.bit_length(), key.has_private()

    def cipher(self, key, label):
        h = self.hash
        return self.PKCS1_OAEP.new(
            key, hashAlgo=h, mgfunc=lambda x, y: self.MGF1(x, y, h), label=label or b""
        )

    def encrypt(self, key, msg, label):
        return self.cipher(key.public_key(), label).encrypt(msg)

    def decrypt(self, key, ct, label):
        try:
            return self.cipher(key, label).decrypt(ct)
        except ValueError:
            return None

    def pss(self, key, salt_len):
        kwargs = {} if salt_len is None else {"salt_bytes": salt_len}
        return self.pss_mod.new(key, **kwargs)

    def sign(self, key, msg, salt_len):
        return self.pss(key, salt_len).sign(self.hash.new(msg))

    def verify(self, key, msg, sig, salt_len):
        try:
            self.pss(key.public_key(), salt_len).verify(self.hash.new(msg), sig)
            return True
        except (ValueError, TypeError):
            return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib", choices=["cryptography", "pycryptodome"])
    ap.add_argument("op", choices=["info", "encrypt", "decrypt", "sign", "verify"])
    ap.add_argument("--key", required=True)
    ap.add_argument("--in", dest="input")
    ap.add_argument("--out")
    ap.add_argument("--sig")
    ap.add_argument("--hash", default="sha256", choices=["sha1", "sha256", "sha384", "sha512"])
    ap.add_argument("--label")
    ap.add_argument("--salt-len", type=int)
    a = ap.parse_args()

    lib = (Cryptography if a.lib == "cryptography" else PyCryptodome)(a.hash)
    key = lib.load(a.key)
    label = a.label.encode() if a.label is not None else None

    if a.op == "info":
        bits, e_bits, private = lib.info(key)
        print(f"bits={bits} e_bits={e_bits} private={int(private)}")
    elif a.op == "encrypt":
        write(a.out, lib.encrypt(key, read(a.input), label))
    elif a.op == "decrypt":
        msg = lib.decrypt(key, read(a.input), label)
        if msg is None:
            fail("decryption failed", 1)
        write(a.out, msg)
    elif a.op == "sign":
        write(a.out, lib.sign(key, read(a.input), a.salt_len))
    elif a.op == "verify":
        if not lib.verify(key, read(a.input), read(a.sig), a.salt_len):
            fail("signature verification failed", 1)
        print("signature OK")


if __name__ == "__main__":
    main()
