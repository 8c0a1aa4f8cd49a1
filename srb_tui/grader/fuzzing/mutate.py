"""The fuzzer's mutations: bytes of an input, words of a command line, and delta debugging.

Pure functions of their random generator, so a round's mutation sequence is fixed by its
seed (see :mod:`.argv`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

INTERESTING: tuple[bytes, ...] = (
    b"\x00", b"\x01", b"\x02", b"\x07", b"\x08", b"\x0b", b"\x0c", b"\x1b", b"\x1f", b"\x7f",
    b"\r", b"\n", b"\r\n", b"\t", b'"', b'""', b",", b";", b"|", b"\\", b" ", b"-",
    b"\xef\xbb\xbf",  # BOM
    b"\xc3", b"\xa9", b"\xff", b"\xfe", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80",  # broken UTF-8
    b"\xc3\xa9", b"\xcc\x81", b"\xe2\x80\x8b", b"\xe2\x80\xa8", b"\xc2\x85", b"\xc2\xa0",
    b"\xe6\xbc\xa2", b"\xe3\x80\x80", b"\xef\xbc\xa1", b"\xf0\x9f\x98\x80", b"\xea\xb0\x80",
)  # fmt: skip
GENERIC_TOKENS: tuple[str, ...] = ("--", "-", "0", "1", "")
"""added to any task's vocabulary: end of options, stdin, small numbers, an empty word"""
MAX_INPUT_BYTES = 64 * 1024


def mutate(data: bytes, rng: random.Random, corpus: Sequence[bytes]) -> bytes:
    """One to four stacked byte-level mutations of ``data``."""
    buf = bytearray(data)
    for _ in range(1 + rng.randrange(4)):
        op = rng.randrange(8)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip one bit
            at = min(pos, len(buf) - 1)
            buf[at] ^= 1 << rng.randrange(8)
        elif op == 1:  # insert a random byte
            buf[pos:pos] = bytes([rng.randrange(256)])
        elif op in (2, 3):  # insert an interesting byte sequence
            buf[pos:pos] = rng.choice(INTERESTING)
        elif op == 4 and buf:  # overwrite with an interesting byte sequence
            piece = rng.choice(INTERESTING)
            buf[pos : pos + len(piece)] = piece
        elif op == 5 and buf:  # delete a short run
            del buf[pos : pos + 1 + rng.randrange(4)]
        elif op == 6 and corpus:  # splice in a piece of another input
            other = rng.choice(corpus)
            if other:
                start = rng.randrange(len(other))
                buf[pos:pos] = other[start : start + 1 + rng.randrange(16)]
        elif op == 7 and buf:  # duplicate a line
            lines = bytes(buf).split(b"\n")
            k = rng.randrange(len(lines))
            lines.insert(k, lines[k])
            buf = bytearray(b"\n".join(lines))
    return bytes(buf[:MAX_INPUT_BYTES])


def mutate_argv(
    argv: Sequence[str], rng: random.Random, tokens: Sequence[str] = GENERIC_TOKENS
) -> list[str]:
    """Drop, duplicate or insert one command-line token (drawn from ``tokens``)."""
    out = list(argv)
    op = rng.randrange(3)
    if op == 0 and out:
        del out[rng.randrange(len(out))]
    elif op == 1 and out:
        k = rng.randrange(len(out))
        out.insert(k, out[k])
    else:
        out.insert(rng.randrange(len(out) + 1), rng.choice(list(tokens) or GENERIC_TOKENS))
    return out


def ddmin(data: bytes, failing: Callable[[bytes], bool], deadline: float) -> tuple[bytes, int]:
    """Delta debugging: a 1-minimal (as far as time allows) input that still ``failing``.
    Returns (input, predicate evaluations)."""
    cache: dict[bytes, bool] = {}
    tests = 0

    def test(candidate: bytes) -> bool:
        nonlocal tests
        if candidate not in cache:
            tests += 1
            cache[candidate] = failing(candidate)
        return cache[candidate]

    n = 2
    while len(data) >= 2 and time.monotonic() < deadline:
        size = -(-len(data) // n)
        pieces = [data[i : i + size] for i in range(0, len(data), size)]
        reduced = False
        for piece in pieces:
            if time.monotonic() >= deadline:
                return data, tests
            if test(piece):
                data, n, reduced = piece, 2, True
                break
        if not reduced and len(pieces) > 2:
            for i in range(len(pieces)):
                if time.monotonic() >= deadline:
                    return data, tests
                rest = b"".join(pieces[:i] + pieces[i + 1 :])
                if test(rest):
                    data, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(data):
                break
            n = min(n * 2, len(data))
    return data, tests
