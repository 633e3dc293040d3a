"""Time-lock encryption (Rivest-Shamir-Wagner): data that opens only after ``t`` sequential
squarings, and time-lock puzzles: a key whose solution for a document takes ``t`` squarings to
find and one private operation to check. The files are the CLI's (``.tlock``, ``NAME.key``,
``NAME.pub``, solutions; docs/FORMATS.md sections 12 and 14)."""

import builtins
from typing import Optional, Tuple

from . import _native
from ._progress import Progress, callback

# ``open`` below is this module's; files are opened with the builtin.
_open = builtins.open


def seal(data: bytes, squarings: int, bits: int = 2048, seed: Optional[bytes] = None) -> bytes:
    """Encrypts ``data`` so that opening takes ``squarings`` sequential squarings. The sealer
    uses a fresh modulus and forgets its factors. ``seed``: deterministic, INSECURE (tests)."""
    return _native.tlock_seal(bytes(data), squarings, bits, seed)


def open(data: bytes, checkpoint: Optional[str] = None, progress: Progress = None) -> bytes:
    """Opens sealed bytes by doing their squarings. The data's integrity is checked first. With
    ``checkpoint`` (a path) an interrupted call resumes; Ctrl-C raises ``KeyboardInterrupt``
    after saving it."""
    return _native.tlock_open(bytes(data), checkpoint, callback(progress, "opening"))


def seal_file(src: str, dst: str, squarings: int, bits: int = 2048) -> None:
    """Seals the file ``src`` into ``dst`` (refused if ``dst`` exists)."""
    with _open(src, "rb") as f:
        sealed = seal(f.read(), squarings, bits)
    with _open(dst, "xb") as f:
        f.write(sealed)


def open_file(src: str, dst: str, checkpoint: Optional[str] = None, progress: Progress = None) -> None:
    """Opens the sealed file ``src`` into ``dst`` (refused if ``dst`` exists); the checkpoint
    defaults to ``dst + ".ckpt"``."""
    with _open(src, "rb") as f:
        data = f.read()
    plain = open(data, checkpoint if checkpoint is not None else dst + ".ckpt", progress)
    with _open(dst, "xb") as f:
        f.write(plain)



def puzzle_keygen(squarings: int, bits: int = 2048, rate: Optional[float] = None,
                  hash: str = "sha256", issuer: str = "", seed: Optional[bytes] = None) -> Tuple[str, str]:
    """Makes a puzzle key: returns ``(private_json, public_json)``. Keep the private key
    secret (it checks solutions at once); authors solve the public one. ``rate`` (squarings per
    second) records the reference rate the delay was computed with."""
    return _native.puzzle_keygen(squarings, bits, rate, hash, issuer, seed)


def solve(public_key: str, document: bytes, checkpoint: Optional[str] = None,
          progress: Progress = None) -> str:
    """Solves the puzzle for ``document`` (``t`` sequential squarings, error-checked); returns
    the solution (JSON). With ``checkpoint`` (a path) an interrupted call resumes."""
    return _native.puzzle_solve(public_key.encode(), bytes(document), checkpoint,
                                callback(progress, "solving"))


def verify_solution(private_key: str, document: bytes, solution: str) -> bool:
    """Whether ``solution`` solves the puzzle for ``document`` (one private-key operation)."""
    return _native.puzzle_verify(private_key.encode(), bytes(document), solution.encode())
