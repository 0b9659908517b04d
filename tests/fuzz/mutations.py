"""Mutations of real config files, shared by the bounded test and the long fuzz harness.

Each mutation is deterministic for a given random.Random: byte flips, truncation, shuffled and
duplicated lines, stray tabs, anchors/aliases, tags, NUL bytes, invalid UTF-8.
"""

from __future__ import annotations

import random


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if buffer:
            buffer[rng.randrange(len(buffer))] = rng.randrange(256)
    return bytes(buffer)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    rng.shuffle(lines)
    return b"".join(lines)


def duplicate_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        if lines:
            index = rng.randrange(len(lines))
            lines.insert(index, lines[index])
    return b"".join(lines)


def stray_tabs(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        if lines:
            index = rng.randrange(len(lines))
            lines[index] = b"\t" + lines[index]
    return b"".join(lines)


def anchors_and_aliases(data: bytes, rng: random.Random) -> bytes:
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
           b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    return bomb + data if rng.random() < 0.5 else data + b"\nalias: *undefined\n"


def tags(data: bytes, rng: random.Random) -> bytes:
    tag = rng.choice([b"!!python/object/apply:os.system ['touch /tmp/trainlint-pwned']", b"!!binary AAAA",
                      b"!custom {x: 1}", b"!!float nope", b"!!int 0x1F"])
    return data + b"\ninjected: " + tag + b"\n"


def nul(data: bytes, rng: random.Random) -> bytes:
    index = rng.randrange(len(data) + 1)
    return data[:index] + b"\x00" + data[index:]


def invalid_utf8(data: bytes, rng: random.Random) -> bytes:
    index = rng.randrange(len(data) + 1)
    return data[:index] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]) + data[index:]


_HOSTILE_YAML = [b"._", b"0b_", b"0x_", b"._e+1", b"9" * 4400, b"!!binary AAAA", b"2001-01-01", b"[lora]", b"auto",
                 b"7", b"true", b"~", b"{}", b"[]", b"-.inf", b".nan", b"'0x_'", b"!!int 0x1F", b"=", b"<<: {a: 1}"]
_HOSTILE_JSON = [b"9" * 4400, b"1e999", b"-0", b"NaN", b"Infinity", b'"auto"', b"[]", b"{}", b"null", b"true",
                 b'["lora"]', b'"\\ud800"', b"7"]


def hostile_values(data: bytes, rng: random.Random) -> bytes:
    """Type confusion: one value replaced by a scalar or collection of another type (issue 19, fault 8)."""
    lines = data.splitlines(keepends=True)
    is_json = data.lstrip()[:1] in (b"{", b"[")
    candidates = [index for index, line in enumerate(lines) if (b'": ' if is_json else b": ") in line]
    if not candidates:
        return data
    index = rng.choice(candidates)
    line = lines[index]
    separator = b'": ' if is_json else b": "
    head, _, tail = line.partition(separator)
    ending = b",\n" if is_json and tail.rstrip().endswith(b",") else b"\n"
    value = rng.choice(_HOSTILE_JSON if is_json else _HOSTILE_YAML)
    lines[index] = head + separator + value + ending
    return b"".join(lines)


MUTATIONS = [flip_bytes, truncate, shuffle_lines, duplicate_lines, stray_tabs, anchors_and_aliases, tags, nul,
             invalid_utf8]


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    mutation = rng.choice(MUTATIONS)
    return mutation.__name__, mutation(data, rng)
