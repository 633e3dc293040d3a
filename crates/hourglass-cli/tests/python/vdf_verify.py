#!/usr/bin/env python3
"""Independent verifier for hourglass VDF proof files, written only from docs/FORMATS.md
section 15 ("Verifiable delay function proofs") and the committed vectors.

Usage:
    vdf_verify.py PROOF.json [--modulus-n HEX] [--allow-insecure]
        Prints `valid` and exits 0 for a valid proof; prints `invalid: <reason>` and exits 1
        otherwise. A proof over a modulus other than rsa-2048 is accepted only when
        --modulus-n names that modulus (a prover who chose N may know its factors).
    vdf_verify.py --kat KAT.json VECTOR_DIR
        For every kat.json entry, recomputes x from the proof file's input and modulus (and,
        for Wesolowski, the challenge prime l from the statement), compares with kat.json,
        and prints one line per vector. Each challenge-prime candidate's Baillie-PSW verdict
        is cross-checked against pycryptodome's primality test. Exit 0 when all match.

Exit status: 0 valid / all match, 1 invalid / mismatch, 2 usage error or missing library
(run `bash scripts/setup-debian.sh`).

Primality is this file's own Baillie-PSW (15.4), not a library's.
"""

import hashlib
import json
import math
import os
import sys

# RSA Factoring Challenge number RSA-2048 (617 decimal digits).
RSA_2048_DECIMAL = (
    "25195908475657893494027183240048398571429282126204032027777137836043662020707595556264018525880784"
    "4069182906412495150821892985591491761845028084891200728449926873928072877767359714183472702618963750149718246911"
    "6507761337985909570009733045974880842840179742910064245869181719511874612151517265463228221686998754918242243363"
    "7259085141865462043576798423387184774447920739934236584823824281198163815010674810451660377306056201619676256133"
    "8441436038339044149526344321901146575444541784240209246165157233507787077498171257724679629263863563732899121548"
    "31438167899885040445364023527381951378636564391212010397122822120720357"
)
RSA_2048 = int(RSA_2048_DECIMAL)
assert len(RSA_2048_DECIMAL) == 617 and RSA_2048.bit_length() == 2048

SMALL_PRIMES_15 = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47]
B = math.prod(SMALL_PRIMES_15)
assert B == 614889782588491410

MAX_FILE = 1 << 20
MAX_INPUT = 65536
MAX_ROUNDS = 64
MAX_T = 1 << 50
FIELDS = [
    "format",
    "version",
    "scheme",
    "modulus",
    "security_bits",
    "iterations",
    "input",
    "output",
    "proof",
]


class Invalid(Exception):
    """The proof (or file) is invalid; the message is the reason."""


class Usage(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Encodings (15 preamble, 15.1)


def u16be(v):
    return v.to_bytes(2, "big")


def u32be(v):
    return v.to_bytes(4, "big")


def u64be(v):
    return v.to_bytes(8, "big")


def byte_len(n):
    return (n.bit_length() + 7) // 8


def enc(v, b):
    return v.to_bytes(b, "big")


def canon(v, n):
    v %= n
    return min(v, n - v)


def is_canonical(v, n):
    return 0 < v <= (n - 1) // 2


# ---------------------------------------------------------------------------------------------
# Primality: Baillie-PSW (15.4)


def _small_primes(limit):
    sieve = bytearray([1]) * limit
    sieve[0:2] = b"\0\0"
    for i in range(2, math.isqrt(limit - 1) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, limit, i)))
    return [i for i in range(limit) if sieve[i]]


PRIMES_BELOW_2_16 = _small_primes(1 << 16)


def strong_probable_prime_base2(n):
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    x = pow(2, d, n)
    if x == 1 or x == n - 1:
        return True
    for _ in range(s - 1):
        x = x * x % n
        if x == n - 1:
            return True
    return False


def jacobi(a, n):
    assert n > 0 and n % 2 == 1
    a %= n
    result = 1
    while a:
        while a % 2 == 0:
            a //= 2
            if n % 8 in (3, 5):
                result = -result
        a, n = n, a
        if a % 4 == 3 and n % 4 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


def strong_lucas_probable_prime(n):
    """Strong Lucas test with Selfridge's method A: D in 5, -7, 9, -11, ..., P = 1,
    Q = (1 - D) / 4. `n` is odd, > 2 and not a perfect square."""
    d = 5
    while True:
        j = jacobi(d, n)
        if j == -1:
            break
        if j == 0 and abs(d) != n:
            return False  # gcd(D, n) is a proper factor
        d = -d - 2 if d > 0 else -d + 2
    p, q = 1, (1 - d) // 4
    # n + 1 = dd * 2^s with dd odd.
    dd, s = n + 1, 0
    while dd % 2 == 0:
        dd //= 2
        s += 1
    # Compute U_dd, V_dd, Q^dd by left-to-right binary method.
    inv2 = pow(2, -1, n)
    u, v, qk = 1, p % n, q % n  # U_1, V_1, Q^1
    for bit in bin(dd)[3:]:
        # Double: U_2k = U_k V_k, V_2k = V_k^2 - 2 Q^k.
        u, v = u * v % n, (v * v - 2 * qk) % n
        qk = qk * qk % n
        if bit == "1":
            # Add one: U_(k+1) = (P U + V) / 2, V_(k+1) = (D U + P V) / 2.
            u, v = (p * u + v) * inv2 % n, (d * u + p * v) * inv2 % n
            qk = qk * q % n
    if u == 0 or v == 0:
        return True
    for _ in range(s - 1):
        v = (v * v - 2 * qk) % n
        qk = qk * qk % n
        if v == 0:
            return True
    return False


def is_prime_bpsw(n):
    if n < 2:
        return False
    for p in PRIMES_BELOW_2_16[:100]:
        if n == p:
            return True
        if n % p == 0:
            return False
    if not strong_probable_prime_base2(n):
        return False
    r = math.isqrt(n)
    if r * r == n:
        return False
    return strong_lucas_probable_prime(n)


# ---------------------------------------------------------------------------------------------
# Modulus (15.1)


def integer_root(n, k):
    """floor(n^(1/k)) for n >= 0."""
    if n < 2:
        return n
    hi = 1 << (n.bit_length() // k + 1)
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid**k <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_modulus(n, allow_insecure=False):
    bits = n.bit_length()
    if n % 2 == 0:
        raise Invalid("modulus is even")
    if bits > 8192:
        raise Invalid(f"modulus has {bits} bits (more than 8192)")
    if bits < 1024 and not allow_insecure:
        raise Invalid(f"modulus has {bits} bits (fewer than 1024)")
    for p in PRIMES_BELOW_2_16:
        if n % p == 0:
            raise Invalid(f"modulus has the prime factor {p} below 2^16")
    # No factor below 2^16, so a perfect power n = a^k has a >= 2^16 and k <= bits / 16.
    for k in range(2, bits // 16 + 2):
        a = integer_root(n, k)
        if a**k == n:
            raise Invalid(f"modulus is a perfect power ({k})")
    if is_prime_bpsw(n):
        raise Invalid("modulus is prime")


# ---------------------------------------------------------------------------------------------
# 15.2 input to group, 15.3 statement, 15.4 challenge prime


def hash_to_group(m, n):
    b = byte_len(n)
    base = b"hourglass-vdf-v1/input-to-group" + u32be(b) + enc(n, b) + u64be(len(m)) + m
    need = b + 16
    stream = b""
    c = 0
    while len(stream) < need:
        stream += hashlib.sha512(base + u32be(c)).digest()
        c += 1
    x = canon(int.from_bytes(stream[:need], "big") % n, n)
    if x <= 1:
        raise Invalid("input hashes to x <= 1")
    if math.gcd(x, n) != 1:
        raise Invalid("input hashes to an element sharing a factor with N")
    return x


def hash_fn(k):
    return {128: hashlib.sha256, 256: hashlib.sha512}[k]


def statement(scheme, n, x, y, t, k):
    b = byte_len(n)
    return (
        b"hourglass-vdf-v1/"
        + scheme.encode("ascii")
        + b"/statement\0"
        + u32be(b)
        + enc(n, b)
        + enc(x, b)
        + enc(y, b)
        + u64be(t)
        + u16be(k)
    )


def crt_residue(digits):
    """The unique r in [0, B) with r = digits[i] + 1 (mod p_i)."""
    r = 0
    for p, d in zip(SMALL_PRIMES_15, digits):
        m = B // p
        r += (d + 1) * m * pow(m, -1, p)
    return r % B


def challenge_prime(stmt, k, candidates=None):
    """15.4. `candidates`, if a list, receives every c tested (for cross-checking)."""
    hf = hash_fn(k)
    top = 1 << (2 * k)
    for j in range(1 << 16):
        h = int.from_bytes(hf(stmt + u32be(j)).digest(), "big")
        h |= 1 << (2 * k - 1)
        v = h % B
        w, digits = v, []
        for p in SMALL_PRIMES_15:
            digits.append(w % (p - 1))
            w //= p - 1
        r = crt_residue(digits)
        assert math.gcd(r, B) == 1
        c = h - v + r
        if c >= top:
            c -= B
        elif c < (1 << (2 * k - 1)):
            c += B
        prime = is_prime_bpsw(c)
        if candidates is not None:
            candidates.append((j, c, prime))
        if prime:
            return c
    raise Invalid("no challenge prime below j = 2^16")


# ---------------------------------------------------------------------------------------------
# 15.5 Wesolowski, 15.6 Pietrzak


def verify_wesolowski(n, x, y, t, k, pi, l_value):
    if not is_canonical(y, n):
        raise Invalid("output is not canonical")
    if not is_canonical(pi, n):
        raise Invalid("pi is not canonical")
    if l_value.bit_length() != 2 * k:
        raise Invalid(f"l does not have exactly {2 * k} bits")
    r = pow(2, t, l_value)
    y2 = canon(pow(pi, l_value, n) * pow(x, r, n), n)
    if y2 != y:
        raise Invalid("pi^l * x^r != y")
    stmt = statement("wesolowski", n, x, y, t, k)
    if challenge_prime(stmt, k) != l_value:
        raise Invalid("l is not the challenge prime of the statement")
    if math.gcd(x * y * pi % n, n) != 1:
        raise Invalid("gcd(x y pi, N) != 1")


def halvings(t):
    ts, hs = [t], []
    while ts[-1] > 64:
        h = (ts[-1] + ts[-1] % 2) // 2
        hs.append(h)
        ts.append(h)
    return ts, hs


def verify_pietrzak(n, x, y, t, k, mus):
    b = byte_len(n)
    hf = hash_fn(k)
    ts, _ = halvings(t)
    rounds = len(ts) - 1
    if len(mus) != rounds:
        raise Invalid(f"{len(mus)} mu values, expected {rounds}")
    if not is_canonical(y, n):
        raise Invalid("output is not canonical")
    for i, mu in enumerate(mus):
        if not is_canonical(mu, n):
            raise Invalid(f"mu_{i} is not canonical")
    xi, yi = x, y
    rs = []
    d = hf(statement("pietrzak", n, x, y, t, k)).digest()
    for i in range(rounds):
        if ts[i] % 2 == 1:
            yi = canon(yi * yi, n)
        mu = mus[i]
        d = hf(
            b"hourglass-vdf-v1/pietrzak/round\0"
            + d
            + u32be(i)
            + enc(xi, b)
            + enc(yi, b)
            + enc(mu, b)
        ).digest()
        r = int.from_bytes(d[: k // 8], "big")
        rs.append(r)
        xi, yi = canon(pow(xi, r, n) * mu, n), canon(pow(mu, r, n) * yi, n)
    if canon(pow(xi, 1 << ts[rounds], n), n) != yi:
        raise Invalid("final check x_R^(2^t_R) != y_R fails")
    prod = x * y % n
    for mu in mus:
        prod = prod * mu % n
    if math.gcd(prod, n) != 1:
        raise Invalid("gcd(x y mu_0 .. mu_(R-1), N) != 1")
    return rs


# ---------------------------------------------------------------------------------------------
# 15.7 proof file


def parse_hex(value, what, nbytes=None):
    if not isinstance(value, str):
        raise Invalid(f"{what} is not a string")
    if any(ch not in "0123456789abcdef" for ch in value):
        raise Invalid(f"{what} is not lowercase hex")
    if len(value) % 2:
        raise Invalid(f"{what} has an odd number of hex digits")
    if nbytes is not None and len(value) != 2 * nbytes:
        raise Invalid(f"{what} has {len(value)} hex digits, expected {2 * nbytes}")
    return bytes.fromhex(value)


def no_duplicates(pairs):
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate keys in {keys}")
    return dict(pairs)


def is_json_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_proof(path, allow_insecure=False):
    """Parses and checks a proof file; returns a dict with n, m, x, y, t, k, scheme, proof."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise Usage(f"cannot read {path}: {e}")
    if size > MAX_FILE:
        raise Invalid("file larger than 1 MiB")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError) as e:
        raise Invalid(f"not UTF-8 JSON: {e}")
    if not isinstance(doc, dict):
        raise Invalid("not a JSON object")
    unknown = [key for key in doc if key not in FIELDS]
    if unknown:
        raise Invalid(f"unknown fields {unknown}")
    missing = [key for key in FIELDS if key not in doc]
    if missing:
        raise Invalid(f"missing fields {missing}")
    if doc["format"] != "hourglass-vdf-proof":
        raise Invalid("format is not hourglass-vdf-proof")
    if not is_json_int(doc["version"]) or doc["version"] != 1:
        raise Invalid(f"version {doc['version']!r} is not 1")
    scheme = doc["scheme"]
    if scheme not in ("wesolowski", "pietrzak"):
        raise Invalid(f"unknown scheme {scheme!r}")

    modulus = doc["modulus"]
    if modulus == "rsa-2048":
        n, builtin = RSA_2048, True
    else:
        if not isinstance(modulus, str) or not modulus:
            raise Invalid("modulus is neither rsa-2048 nor hex")
        if any(ch not in "0123456789abcdef" for ch in modulus):
            raise Invalid("modulus is not lowercase hex")
        if modulus[0] == "0":
            raise Invalid("modulus hex has leading zeros")
        n = int(modulus, 16)
        # The built-in number spelt in hex is still the trusted rsa-2048 group.
        builtin = n == RSA_2048
        if not builtin:
            check_modulus(n, allow_insecure)
    b = byte_len(n)

    k = doc["security_bits"]
    if not is_json_int(k) or k not in (128, 256):
        raise Invalid(f"security_bits {k!r} is not 128 or 256")
    t = doc["iterations"]
    if not is_json_int(t) or not 1 <= t <= MAX_T:
        raise Invalid(f"iterations {t!r} not an integer in [1, 2^50]")
    m = parse_hex(doc["input"], "input")
    if len(m) > MAX_INPUT:
        raise Invalid("input longer than 65536 bytes")
    y = int.from_bytes(parse_hex(doc["output"], "output", b), "big")

    proof = doc["proof"]
    if not isinstance(proof, dict):
        raise Invalid("proof is not an object")
    result = dict(scheme=scheme, n=n, builtin=builtin, m=m, y=y, t=t, k=k)
    if scheme == "wesolowski":
        if sorted(proof) != ["l", "pi"]:
            raise Invalid(f"wesolowski proof has fields {sorted(proof)}, expected pi and l")
        result["pi"] = int.from_bytes(parse_hex(proof["pi"], "pi", b), "big")
        result["l"] = int.from_bytes(parse_hex(proof["l"], "l", 2 * k // 8), "big")
    else:
        if sorted(proof) != ["mu"]:
            raise Invalid(f"pietrzak proof has fields {sorted(proof)}, expected mu")
        mus = proof["mu"]
        if not isinstance(mus, list):
            raise Invalid("mu is not a list")
        if len(mus) > MAX_ROUNDS:
            raise Invalid("more than 64 rounds")
        result["mu"] = [
            int.from_bytes(parse_hex(v, f"mu_{i}", b), "big") for i, v in enumerate(mus)
        ]
    return result


def verify_file(path, trusted_n=None, allow_insecure=False):
    p = load_proof(path, allow_insecure)
    n = p["n"]
    if trusted_n is not None:
        if n != trusted_n:
            raise Invalid("the proof's modulus is not the trusted modulus")
    elif not p["builtin"]:
        raise Invalid("modulus is not rsa-2048 and --modulus-n does not name it")
    x = hash_to_group(p["m"], n)
    if p["scheme"] == "wesolowski":
        verify_wesolowski(n, x, p["y"], p["t"], p["k"], p["pi"], p["l"])
    else:
        verify_pietrzak(n, x, p["y"], p["t"], p["k"], p["mu"])


# ---------------------------------------------------------------------------------------------
# Regeneration (KAT mode): 15 says two implementations produce byte-identical proof files.


def prove(scheme, n, k, t, m, x):
    """The honest proof object of 15.5 / 15.6, and y (T is small in the vectors)."""
    b = byte_len(n)
    y = canon(pow(x, 1 << t, n), n)
    if scheme == "wesolowski":
        l_value = challenge_prime(statement("wesolowski", n, x, y, t, k), k)
        pi = canon(pow(x, (1 << t) // l_value, n), n)
        return y, {"pi": enc(pi, b).hex(), "l": enc(l_value, 2 * k // 8).hex()}
    hf = hash_fn(k)
    ts, hs = halvings(t)
    xi, yi, mus = x, y, []
    d = hf(statement("pietrzak", n, x, y, t, k)).digest()
    for i in range(len(hs)):
        if ts[i] % 2 == 1:
            yi = canon(yi * yi, n)
        mu = canon(pow(xi, 1 << hs[i], n), n)
        mus.append(mu)
        d = hf(
            b"hourglass-vdf-v1/pietrzak/round\0"
            + d
            + u32be(i)
            + enc(xi, b)
            + enc(yi, b)
            + enc(mu, b)
        ).digest()
        r = int.from_bytes(d[: k // 8], "big")
        xi, yi = canon(pow(xi, r, n) * mu, n), canon(pow(mu, r, n) * yi, n)
    return y, {"mu": [enc(mu, b).hex() for mu in mus]}


def render(scheme, modulus_field, n, k, t, m, y, proof):
    """15.7: pretty-printed with two-space indents and a final newline."""
    doc = {
        "format": "hourglass-vdf-proof",
        "version": 1,
        "scheme": scheme,
        "modulus": modulus_field,
        "security_bits": k,
        "iterations": t,
        "input": m.hex(),
        "output": enc(y, byte_len(n)).hex(),
        "proof": proof,
    }
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------------------------------------
# KAT mode


def run_kat(kat_path, vector_dir):
    try:
        from Crypto.Math.Primality import COMPOSITE, test_probable_prime
    except ImportError:
        raise Usage("pycryptodome is missing; run `bash scripts/setup-debian.sh`")
    with open(kat_path, encoding="utf-8") as f:
        entries = json.load(f)
    if not isinstance(entries, list) or not entries:
        raise Usage("kat.json is not a non-empty list")
    failures = 0
    for entry in entries:
        name = entry["file"]
        problems = []
        try:
            path = os.path.join(vector_dir, name)
            p = load_proof(path)
            n, b = p["n"], byte_len(p["n"])
            x = hash_to_group(p["m"], n)
            if enc(x, b).hex() != entry["x"]:
                problems.append(f"x = {enc(x, b).hex()} != kat {entry['x']}")
            if enc(p["y"], b).hex() != entry["y"]:
                problems.append("the file's output differs from kat y")
            if p["scheme"] == "wesolowski":
                stmt = statement("wesolowski", n, x, p["y"], p["t"], p["k"])
                tried = []
                l_value = challenge_prime(stmt, p["k"], tried)
                for j, c, prime in tried:
                    other = test_probable_prime(c) != COMPOSITE
                    if other != prime:
                        problems.append(
                            f"j = {j}: own BPSW says prime={prime}, pycryptodome {other}"
                        )
                got = l_value.to_bytes(2 * p["k"] // 8, "big").hex()
                if got != entry["l"]:
                    problems.append(f"l = {got} != kat {entry['l']}")
                if got != enc(p["l"], 2 * p["k"] // 8).hex():
                    problems.append("l differs from the file's proof.l")
                detail = f"x ok, l ok (j = {tried[-1][0]}, {len(tried)} candidates)"
            else:
                if entry["l"] is not None:
                    problems.append("kat l is not null for a pietrzak vector")
                rs = verify_pietrzak(n, x, p["y"], p["t"], p["k"], p["mu"])
                got = [r.to_bytes(p["k"] // 8, "big").hex() for r in rs]
                if got != entry["r"]:
                    problems.append(f"round challenges {got} != kat {entry['r']}")
                detail = f"x ok, {len(rs)} round challenges ok"
            with open(path, "rb") as f:
                raw = f.read()
            modulus_field = "rsa-2048" if p["builtin"] else f"{n:x}"
            y, proof = prove(p["scheme"], n, p["k"], p["t"], p["m"], x)
            text = render(p["scheme"], modulus_field, n, p["k"], p["t"], p["m"], y, proof)
            if text.encode("utf-8") != raw:
                problems.append("the regenerated proof file differs from the committed one")
            else:
                detail += ", regenerated byte for byte"
        except Invalid as e:
            problems.append(str(e))
        if problems:
            failures += 1
            print(f"{name}: MISMATCH: " + "; ".join(problems))
        else:
            print(f"{name}: {detail}")
    return failures


# ---------------------------------------------------------------------------------------------


def main(argv):
    try:
        if argv and argv[0] == "--kat":
            if len(argv) != 3:
                raise Usage("usage: vdf_verify.py --kat KAT.json VECTOR_DIR")
            failures = run_kat(argv[1], argv[2])
            if failures:
                print(f"{failures} vector(s) mismatch")
                return 1
            return 0
        path, trusted_n, allow_insecure = None, None, False
        i = 0
        while i < len(argv):
            arg = argv[i]
            if arg == "--modulus-n" and i + 1 < len(argv):
                text = argv[i + 1].lower()
                text = text[2:] if text.startswith("0x") else text
                try:
                    trusted_n = int(text, 16)
                except ValueError:
                    raise Usage("--modulus-n takes hexadecimal")
                i += 2
            elif arg == "--allow-insecure":
                allow_insecure = True
                i += 1
            elif path is None and not arg.startswith("--"):
                path = arg
                i += 1
            else:
                raise Usage(f"unexpected argument {arg!r}")
        if path is None:
            raise Usage("usage: vdf_verify.py PROOF.json [--modulus-n HEX] | --kat KAT.json DIR")
        try:
            verify_file(path, trusted_n, allow_insecure)
        except Invalid as e:
            print(f"invalid: {e}")
            return 1
        print("valid")
        return 0
    except Usage as e:
        print(f"vdf_verify: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
