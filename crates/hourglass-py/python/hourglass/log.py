"""The transparency log of receipts (``hourglass serve``'s ``/log``, a C2SP tiled log): verify
a log and that it extends what you saw last time, and find every receipt for a document or a
set. The same client as ``hourglass log verify`` and ``hourglass log search``.

Keys are C2SP verifier keys (``name+id+base64``): the log's is at ``/log/key`` on its service
(get it once, from a source you trust); a witness's is its ``witness.pub``.
"""

import json
from typing import Any, Dict, Iterable, Optional, Union

from . import _native


def _text(k: Union[str, bytes]) -> str:
    return (k.decode() if isinstance(k, bytes) else k).strip()


def _keys(keys: Optional[Iterable[Union[str, bytes]]]):
    return None if keys is None else [_text(k) for k in keys]


def verify(
    url: str,
    log_key: Union[str, bytes],
    state: Optional[str] = None,
    witness_keys: Optional[Iterable[Union[str, bytes]]] = None,
    witness_quorum: Optional[int] = None,
    institution: Optional[bytes] = None,
) -> Dict[str, Any]:
    """Verifies the log under ``url`` (its prefix, e.g. ``http://host:8080/log``): its
    checkpoint signed by ``log_key`` and cosigned by ``witness_quorum`` of ``witness_keys``
    (default: all), every entry, and that it extends the checkpoint saved in the file
    ``state`` by the last call (the file is written only when the log verifies). Returns
    ``log verify --json``'s document: ``valid``, ``checkpoint``, ``previous``, ``new_entries``
    (with ``institution``, PEM, whether it signed each receipt), ``trust``; a fork, a rewritten
    history or a checkpoint that does not verify gives ``valid`` False and ``reason``. A log
    that cannot be reached raises :class:`hourglass.HourglassError`."""
    return json.loads(_native.log_verify(
        url, _text(log_key), state, _keys(witness_keys), witness_quorum,
        None if institution is None else bytes(institution),
    ))


def search(
    url: str,
    log_key: Union[str, bytes],
    document: Optional[bytes] = None,
    set: Optional[str] = None,
    witness_keys: Optional[Iterable[Union[str, bytes]]] = None,
    witness_quorum: Optional[int] = None,
    institution: Optional[bytes] = None,
) -> Dict[str, Any]:
    """Every receipt in the log under ``url`` for ``document`` (its bytes) or for the set named
    ``set``, the whole log verified first: ``checkpoint``, ``entries_read``, ``found``, ``trust``.
    A log that does not verify raises :class:`hourglass.HourglassError`."""
    return json.loads(_native.log_search(
        url, _text(log_key), None if document is None else bytes(document), set,
        _keys(witness_keys), witness_quorum, None if institution is None else bytes(institution),
    ))
