"""RFC 3161 timestamps of any file, from any authority, judged as ``hourglass timestamp verify``
judges them (the same library, the same verdict): RSA PKCS#1 v1.5 and PSS, ECDSA over P-256,
P-384 and P-521 with any SHA-2 (sigstore, FreeTSA), and Ed25519 signers; the certificate path
validated at the token's ``genTime`` by rustls-webpki, up to an anchor you pin; and the latest
time the token proves, ``genTime`` plus its accuracy (RFC 3161 section 2.4.2)."""

import json
from typing import Any, Dict, Iterable, Optional, Union

from . import _native


def _bytes(x: Union[str, bytes]) -> bytes:
    return x.encode() if isinstance(x, str) else bytes(x)


def verify(
    token: bytes,
    tsa_cas: Iterable[Union[str, bytes]],
    data: Optional[bytes] = None,
    digest: Optional[bytes] = None,
    untrusted: Optional[Iterable[Union[str, bytes]]] = None,
) -> Dict[str, Any]:
    """Verifies ``token`` (the DER bytes of a token or of a ``.tsr`` reply) over ``data``, or
    over ``digest`` (its hash, made with the hash the token's imprint names), against
    ``tsa_cas``: the CA certificates you trust (PEM, several per file, or DER; a root, or an
    intermediate pinned as the end of the path). ``untrusted`` are more certificates to build
    the path from (the authority's own when the token does not carry it, as sigstore's do not).

    Returns ``hourglass timestamp verify --json``'s document: ``valid`` True with ``gen_time``,
    ``gen_time_text``, ``accuracy`` (seconds, None if the token states none), ``latest`` (the
    latest time the token proves), ``tsa``, ``tsa_name``, ``serial``, ``policy``, ``hash``,
    ``imprint``, ``nonce``, ``signature``, ``path`` (subjects, signer to anchor) and
    ``anchor``; or ``valid`` False with ``reason`` for a token that does not verify, covers
    other data, or has no valid path to an anchor at its ``genTime``. Input that cannot be read
    or checked (not a token, no anchor, a missing signer certificate) raises
    :class:`hourglass.HourglassError` or ``ValueError``."""
    if isinstance(token, str):
        raise TypeError("a token is the bytes of a .tsr reply or token (DER), not text")
    return json.loads(_native.timestamp_verify(
        bytes(token), [_bytes(c) for c in tsa_cas],
        None if data is None else bytes(data),
        None if digest is None else bytes(digest),
        None if untrusted is None else [_bytes(c) for c in untrusted],
    ))
