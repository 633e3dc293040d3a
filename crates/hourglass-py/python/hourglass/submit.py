"""Offline submission: seal a document against an institution's published puzzle set, and
verify a bundle. Bundles and sets are the files of ``hourglass submit`` (docs/FORMATS.md,
section 12): a bundle sealed here verifies with the CLI and back."""

import json
import os
import re
from typing import Any, Dict, Iterable, Optional, Union

from . import _native
from ._progress import Progress, callback

Duration = Union[None, int, float, str]
_UNITS = {"s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600, "d": 86400}


def _seconds(d: Duration) -> Optional[float]:
    """Seconds from a number or a string such as ``"90s"``, ``"10min"``, ``"5h"``, ``"1d"``."""
    if d is None or isinstance(d, (int, float)):
        return None if d is None else float(d)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|sec|min|m|h|d)\s*", d)
    if not m:
        raise ValueError(f"not a duration: {d!r} (use e.g. 90s, 10min, 5h, 1d)")
    return float(m.group(1)) * _UNITS[m.group(2)]


def _bytes(x: Union[str, bytes]) -> bytes:
    return x.encode() if isinstance(x, str) else bytes(x)


def seal(
    document: bytes,
    set: Union[str, bytes],
    checkpoint: str,
    expect: Duration = None,
    until: Duration = None,
    bundle: Optional[Union[str, bytes]] = None,
    on_link=None,
    progress: Progress = None,
) -> str:
    """Seals ``document`` against ``set`` (the text of a ``set.json``, private or public) until
    ``expect`` (or ``until``) is credited; returns the bundle (JSON text). ``bundle`` resumes
    one; ``on_link(bundle_json)`` is called after each finished link (save it); ``checkpoint``
    (a path) keeps the link in progress, so Ctrl-C loses nothing."""
    return _native.submit_seal(
        bytes(document), _bytes(set), checkpoint, _seconds(expect), _seconds(until),
        None if bundle is None else _bytes(bundle), on_link, callback(progress, "sealing"),
    )


def seal_file(document: str, set: str, bundle: str, expect: Duration = None, until: Duration = None,
              progress: Progress = None) -> None:
    """Like :func:`seal` with files: the bundle file is rewritten (atomically) after each link
    and resumed when it exists; its checkpoint is ``bundle + ".ckpt"``."""
    with open(document, "rb") as f:
        doc = f.read()
    with open(set, "rb") as f:
        set_text = f.read()
    previous = None
    if os.path.exists(bundle):
        with open(bundle, "rb") as f:
            previous = f.read()

    def save(text: str) -> None:
        tmp = bundle + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, bundle)

    save(seal(doc, set_text, bundle + ".ckpt", expect, until, previous, save, progress))


def verify(
    bundle: Union[str, bytes],
    document: bytes,
    keys: Optional[Iterable[Union[str, bytes]]] = None,
    set: Optional[Union[str, bytes]] = None,
    transcript: Optional[Union[str, bytes]] = None,
    committee_certs: Optional[Iterable[Union[str, bytes]]] = None,
    received: Optional[str] = None,
    deadline: Optional[str] = None,
    timestamps: Optional[Iterable[bytes]] = None,
    tsa_cas: Optional[Iterable[Union[str, bytes]]] = None,
    untrusted: Optional[Iterable[Union[str, bytes]]] = None,
) -> Dict[str, Any]:
    """Verifies a bundle for ``document`` with hourglass's one verdict (the CLI's and the
    service's): with the institution's ``.key`` texts (``keys``) for a private set, or with the
    public ``set`` for a public one. A set on a committee's modulus needs the committee pinned:
    its signed ``transcript`` and the PEM certificates of its members you trust
    (``committee_certs``); without them it raises. ``received`` and ``deadline`` (RFC 3339)
    date the verdict (``received`` defaults to now).

    ``timestamps`` date the bundle instead of ``received``: RFC 3161 replies (``.tsr``) or
    tokens, DER bytes, over the bundle's bytes exactly as given (pass the bundle file's bytes),
    each checked against ``tsa_cas``, the CA certificates you trust (PEM, several per file, or
    DER), with ``untrusted`` certificates to build their paths from; ``received`` is then the
    earliest of the latest times they prove (``genTime`` plus accuracy, as
    :func:`hourglass.timestamp.verify` says). Timestamps without ``tsa_cas``, or
    together with ``received``, raise ``ValueError``. A token that does not verify, covers
    other bytes or chains to none of ``tsa_cas`` makes the verdict invalid, its ``reason``
    naming the token (``timestamps[0]``, ...) and its ``received`` None; bytes that are not a
    token raise :class:`HourglassError`.

    Returns the verdict as ``hourglass submit verify --json`` prints it: ``valid``, ``set``,
    ``trust``, ``trustless``, ``assumption``, ``document_matches``, ``credited_secs``,
    ``reason``, ``links``, ``received``, ``credited_ms``, ``predated_to``, ``deadline``,
    ``before_deadline``, ``received_from`` (``"timestamps"``, ``"received"`` or ``"this
    machine's clock"``) and ``timestamps`` (each verified token's ``name`` and the fields of
    :func:`hourglass.timestamp.verify`; None without timestamps)."""
    if timestamps is not None:
        timestamps = [_token(t) for t in timestamps]
    verdict = _native.submit_verify(
        _bytes(bundle), bytes(document),
        None if keys is None else [_bytes(k) for k in keys],
        None if set is None else _bytes(set),
        None if transcript is None else _bytes(transcript),
        None if committee_certs is None else [_bytes(c) for c in committee_certs],
        received, deadline, timestamps,
        None if tsa_cas is None else [_bytes(c) for c in tsa_cas],
        None if untrusted is None else [_bytes(c) for c in untrusted],
    )
    return json.loads(verdict)


def _token(t: bytes) -> bytes:
    if isinstance(t, str):
        raise TypeError("a timestamp is the bytes of a .tsr reply or token (DER), not text")
    return bytes(t)


def check_receipt(
    receipt: Union[str, bytes],
    institution: bytes,
    document: Optional[bytes] = None,
    tsa_cas: Optional[Iterable[Union[str, bytes]]] = None,
    log_key: Optional[Union[str, bytes]] = None,
    witness_keys: Optional[Iterable[Union[str, bytes]]] = None,
    witness_quorum: Optional[int] = None,
) -> Dict[str, Any]:
    """Checks a receipt of an institution's service (``hourglass serve``), as ``hourglass
    submit check-receipt --json``: its signature under ``institution`` (the PEM of
    ``/institution.pub``), its RFC 3161 token (chaining to that key or to one of ``tsa_cas``),
    and, for a receipt in the service's transparency log, its inclusion proof and checkpoint
    under ``log_key`` (``/log/key``) and ``witness_quorum`` of ``witness_keys`` (default: all).
    Returns the receipt's document with ``valid``: False, with ``reason``, when the receipt
    does not check out (then ``authentic`` is False too), states an invalid submission, or is
    for another ``document``. A receipt that claims a log, checked without ``log_key``, raises
    :class:`hourglass.HourglassError`; with ``log_key``, a receipt in no log is not valid."""
    keys = None if witness_keys is None else [
        (k.decode() if isinstance(k, bytes) else k).strip() for k in witness_keys
    ]
    log = None if log_key is None else (log_key.decode() if isinstance(log_key, bytes) else log_key).strip()
    return json.loads(_native.submit_check_receipt(
        _bytes(receipt), bytes(institution), None if document is None else bytes(document),
        None if tsa_cas is None else [_bytes(c) for c in tsa_cas], log, keys, witness_quorum,
    ))
