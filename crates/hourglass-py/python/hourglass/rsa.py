"""RSA keys of five variants, key files, OAEP, PSS and PKCS#1 v1.5 (hourglass's RSA core:
constant-time, blinded private operations with a fault check)."""

import json
from typing import Any, Dict, Optional

from . import _native

PrivateKey = _native.PrivateKey
PublicKey = _native.PublicKey

VARIANTS = ("standard", "crt", "rebalanced", "scheme-a", "scheme-b")


def generate(bits: int = 3072, variant: str = "crt", seed: Optional[bytes] = None) -> "PrivateKey":
    """Generates a private key. ``seed`` makes it deterministic and INSECURE (tests only)."""
    return _native.PrivateKey.generate(bits, variant, seed)


def load_private_key(data: bytes, passphrase: Optional[bytes] = None) -> "PrivateKey":
    """Reads a private key file's bytes (PEM, DER, hex, JSON; encrypted PKCS#8 with a passphrase)."""
    return _native.PrivateKey.load(data, passphrase)


def load_public_key(data: bytes) -> "PublicKey":
    """Reads a public key file's bytes (a private key file gives its public half)."""
    return _native.PublicKey.load(data, None)


def inspect(key: Any) -> Dict[str, Any]:
    """The key's variant, sizes and safety verdict (what ``hourglass rsa inspect --json`` says)."""
    return json.loads(key.inspect())
