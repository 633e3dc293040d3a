"""Sequential squaring on hourglass's Montgomery kernels (AVX-512 IFMA or MULX/ADX)."""

from . import _native


def _to_bytes(x: int) -> bytes:
    if x < 0:
        raise ValueError("integers must be non-negative")
    return x.to_bytes((x.bit_length() + 7) // 8 or 1, "big")


def square_chain(x: int, t: int, n: int) -> int:
    """Returns ``x ** (2 ** t) % n`` by ``t`` sequential squarings (``n`` odd, ``0 <= x < n``).

    Releases the GIL; Ctrl-C stops it between blocks of 2**20 squarings.
    """
    if t < 0:
        raise ValueError("t must be non-negative")
    return int.from_bytes(_native.square_chain(_to_bytes(x), t, _to_bytes(n)), "big")
