#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkstate_fixtures.py: the two stateful fixtures of tests/data/observed that tell ANE048's
construct (an in-graph KV-cache update read by attention) from a recurrent state update that
looks alike (slice_update of a read_state, linear projections) but is never read by attention.

    python3 tools/mkstate_fixtures.py        # writes tests/data/observed/{kv_cache_update_linear,
                                             #   recurrent_state_linear}.mlpackage

Built with tools/mkobserved.py's ML Program writer; zero weights (placement does not depend on
values). Python stdlib only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkobserved import (Prog, binary, lin, matmul, reshape, softmax, transpose, unary,  # noqa: E402
                        write_package)

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "observed")


def kv_cache_update_linear():
    """coremltools #2553's construct, small: k = linear(x) -> heads -> slice_update into the
    MLState cache [1,H,ctx,D] -> write_state; the cache read again is the key of q @ k^T."""
    S, C, H, D, ctx = 1, 64, 2, 32, 64
    p = Prog("CoreML8")
    x = p.inp("x", "fp16", [1, S, C])
    kst = p.state("k_cache", [1, H, ctx, D])
    k = lin(p, "k_proj", x, [1, S, C], C, H * D)
    k = reshape(p, "k_heads", k, [1, S, H, D])
    k = transpose(p, "k_t", k, [0, 2, 1, 3], [1, H, S, D])
    cache = p.op("read_state", [("input", kst)], "k_read", "fp16", [1, H, ctx, D])
    upd = p.op("slice_update", [("x", cache), ("update", k), ("begin", p.ci([0, 0, 0, 0])),
                                ("end", p.ci([1, H, S, D]))], "k_updated", "fp16", [1, H, ctx, D])
    p.op("write_state", [("input", kst), ("data", upd)], "k_write", "fp16", [1, H, ctx, D])
    cache2 = p.op("read_state", [("input", kst)], "k_read2", "fp16", [1, H, ctx, D])
    s = matmul(p, "scores", k, cache2, [1, H, S, ctx], ty=True)
    softmax(p, "attn", s, [1, H, S, ctx])
    return p, [("attn", "fp16", [1, H, S, ctx])], "in-graph KV-cache update read by attention"


def recurrent_state_linear():
    """A two-layer recurrent cell whose hidden states live in one MLState [1,2,64]: each layer
    reads its slice, computes tanh(linear(concat(input, h))) and writes the new value back with
    slice_update; nothing multiplies the state by another activation."""
    C, Hd = 64, 64
    p = Prog("CoreML8")
    x = p.inp("x", "fp16", [1, 1, C])
    st = p.state("hidden", [1, 2, Hd])
    h = p.op("read_state", [("input", st)], "h_read", "fp16", [1, 2, Hd])
    h0 = p.op("slice_by_index", [("x", h), ("begin", p.ci([0, 0, 0])), ("end", p.ci([1, 1, Hd]))],
              "h0", "fp16", [1, 1, Hd])
    xh0 = p.op("concat", [("values", [x, h0]), ("axis", p.ci(2, True)), ("interleave", p.cb(False))],
               "xh0", "fp16", [1, 1, C + Hd])
    z0 = lin(p, "cell0", xh0, [1, 1, C + Hd], C + Hd, Hd)
    n0 = unary(p, "tanh", "h0_next", z0, [1, 1, Hd])
    u0 = p.op("slice_update", [("x", h), ("update", n0), ("begin", p.ci([0, 0, 0])),
                               ("end", p.ci([1, 1, Hd]))], "h_upd0", "fp16", [1, 2, Hd])
    h1 = p.op("slice_by_index", [("x", h), ("begin", p.ci([0, 1, 0])), ("end", p.ci([1, 2, Hd]))],
              "h1", "fp16", [1, 1, Hd])
    xh1 = p.op("concat", [("values", [n0, h1]), ("axis", p.ci(2, True)), ("interleave", p.cb(False))],
               "xh1", "fp16", [1, 1, 2 * Hd])
    z1 = lin(p, "cell1", xh1, [1, 1, 2 * Hd], 2 * Hd, Hd)
    n1 = unary(p, "tanh", "h1_next", z1, [1, 1, Hd])
    u1 = p.op("slice_update", [("x", u0), ("update", n1), ("begin", p.ci([0, 1, 0])),
                               ("end", p.ci([1, 2, Hd]))], "h_upd1", "fp16", [1, 2, Hd])
    p.op("write_state", [("input", st), ("data", u1)], "h_write", "fp16", [1, 2, Hd])
    out = binary(p, "add", "y", n1, n1, [1, 1, Hd])
    return p, [(out, "fp16", [1, 1, Hd])], "recurrent state update (two layers in one MLState)"


def main():
    for fn in (kv_cache_update_linear, recurrent_state_linear):
        p, outs, short = fn()
        mb, weights = p.build(outs, short)
        write_package(os.path.join(OUT, fn.__name__ + ".mlpackage"), mb, weights)
        print("wrote", os.path.join(OUT, fn.__name__ + ".mlpackage"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
