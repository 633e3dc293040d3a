"""Verifiable delay functions in RSA groups: Wesolowski and Pietrzak proofs.

Proofs are the JSON proof files of ``hourglass vdf`` (docs/FORMATS.md, section 15): a proof
made here verifies with ``hourglass vdf verify`` and back.
"""

import json
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _native
from ._progress import Progress, callback

Text = Union[str, bytes]


def _bytes(x: Text) -> bytes:
    return x.encode() if isinstance(x, str) else bytes(x)


def prove(
    input: Text,
    iterations: int,
    scheme: str = "wesolowski",
    security_bits: int = 128,
    modulus: Optional[bytes] = None,
    checkpoint: Optional[str] = None,
    progress: Progress = None,
) -> str:
    """Evaluates ``y = x ** (2 ** iterations)`` (``x`` = the input hashed to the group) and
    returns the proof file (JSON text). The group is the RSA-2048 challenge unless ``modulus``
    (a key file's bytes) names another. With ``checkpoint`` (a path) a stopped run resumes;
    Ctrl-C raises ``KeyboardInterrupt`` after saving it."""
    return _native.vdf_prove(
        _bytes(input), iterations, scheme, security_bits, modulus, checkpoint,
        callback(progress, "vdf"),
    )


def check(proof: Text, input: Optional[Text] = None, modulus: Optional[bytes] = None) -> Dict[str, Any]:
    """The verdict on ``proof`` in the trusted group (RSA-2048, or ``modulus``) and, when
    ``input`` is given, for that input: ``vdf verify --json``'s document, ``{"valid": True,
    "scheme", "modulus", "iterations", "security_bits", "output"}`` or ``{"valid": False,
    "reason"}``. A text that is not a proof file raises HourglassError."""
    return json.loads(_native.vdf_verify(_bytes(proof), None if input is None else _bytes(input), modulus))


def verify(proof: Text, input: Optional[Text] = None, modulus: Optional[bytes] = None) -> bool:
    """Whether ``proof`` is valid in the trusted group (RSA-2048, or ``modulus``) and, when
    ``input`` is given, for that input (:func:`check`'s ``valid``). A text that is not a proof
    file raises HourglassError."""
    return check(proof, input, modulus)["valid"]


def batch_verify(proofs: Iterable[Text], modulus: Optional[bytes] = None) -> List[bool]:
    """One verdict per proof file, verified on every core."""
    return _native.vdf_batch_verify([_bytes(p) for p in proofs], modulus)
