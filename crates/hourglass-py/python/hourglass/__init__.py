"""hourglass: RSA-based timed cryptography on a fast Rust core.

Submodules:

- :mod:`hourglass.rsa`: RSA keys of five variants (standard, CRT, rebalanced, schemes A and
  B), PEM files (encrypted too), OAEP, PSS and PKCS#1 v1.5.
- :mod:`hourglass.timelock`: time-lock encryption (Rivest-Shamir-Wagner): data that opens only
  after ``t`` sequential squarings; resumable with a checkpoint, interruptible with Ctrl-C.
- :mod:`hourglass.vdf`: verifiable delay functions (Wesolowski, Pietrzak): evaluate with
  progress, prove, verify, batch verify.
- :mod:`hourglass.submit`: offline submission: seal a document against a published puzzle
  set (private or public), verify a bundle.
- :mod:`hourglass.log`: the transparency log of receipts: verify a log and its history, find
  every receipt for a document (``submit.check_receipt`` checks one receipt in it).
- :mod:`hourglass.timestamp`: RFC 3161 timestamps of any file, from any authority (RSA, PSS,
  ECDSA, Ed25519), with the latest time each proves.
- :mod:`hourglass.arith`: ``square_chain(x, t, n)``, sequential squaring on hourglass's kernels.

Errors are :class:`HourglassError` with the command line's messages. Long calls release the
GIL.
"""

from ._native import HourglassError
from . import arith, log, rsa, submit, timelock, timestamp, vdf

__all__ = [
    "HourglassError", "arith", "log", "rsa", "submit", "timelock", "timestamp", "vdf",
]
__version__ = "0.1.0"
