# SPDX-License-Identifier: MIT
"""pbwire.py: the protobuf wire encoder of tools/mkfixtures.py and tools/mkmodel.py.

Python stdlib only (no protobuf library). Each f_* function returns the bytes
of one field, key included; a message is the concatenation of its fields.
"""

import struct

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5  # wire types


def varint(n):
    if n < 0:
        n += 1 << 64  # int32/int64 negatives: 10-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def len_key(field, n):
    """The key and length of a length-delimited field of n bytes (the payload follows)."""
    return tag(field, LEN) + varint(n)


def f_varint(field, v):
    return tag(field, VARINT) + varint(int(v))


def f_float(field, x):
    return tag(field, I32) + struct.pack("<f", x)


def f_bytes(field, b):
    return len_key(field, len(b)) + b


def f_str(field, s):
    return f_bytes(field, s.encode())


def f_msg(field, *parts):
    """A sub-message of the given encoded fields (none: an empty message, still written)."""
    return f_bytes(field, b"".join(parts))


def f_packed_varints(field, vals):
    return f_bytes(field, b"".join(varint(v) for v in vals))


def f_packed_floats(field, vals):
    return f_bytes(field, struct.pack("<%df" % len(vals), *vals))
