#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixture_compact.py: writes tests/data/crafted/compact_sparse_live.mlpackage, the
fixture of weight.bin compaction with a live blob that can hold holes
(tests/unit/test_compaction.c; docs/surgery.md "The package writer").

An ML Program (iOS 18 opset, fp16) written by coremltools 8.3's MIL builder:
x [1,64] -> linear "big" (weight [512,64] of zeros: a 64 KB blob whose aligned
4 KB blocks a test can turn into holes, bias [512]) -> linear "y" whose weight
w2 [32,512] is int4 quantized per block of 32 (constexpr_blockwise_shift_scale,
seeded values). `fix --allow approximate` requantizes w2 per channel
(mil-blockwise-to-per-channel): its two blobs die, the zero weight stays live.

Needs coremltools 8.3 with its native blob writer, e.g. the local build of
../shared/tools/coremltools-local:
  PYTHONPATH=/work/ct/src /usr/bin/python3 tools/mkfixture_compact.py
"""
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import coremltools as ct  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402
from coremltools.converters.mil.mil import types  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "crafted",
                   "compact_sparse_live.mlpackage")


def main():
    rng = np.random.default_rng(31)

    @mb.program(input_specs=[mb.TensorSpec((1, 64), dtype=types.fp16)], opset_version=ct.target.iOS18)
    def prog(x):
        big = mb.linear(x=x, weight=np.zeros((512, 64), np.float16), name="big")
        data = rng.integers(-8, 8, (32, 512)).astype(types.np_int4_dtype)
        scale = (rng.random((32, 16)) * 0.1 + 0.01).astype(np.float16)
        w2 = mb.constexpr_blockwise_shift_scale(data=data, scale=scale, name="w2")
        return mb.linear(x=big, weight=w2, name="y")

    m = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18,
                   compute_precision=ct.precision.FLOAT16, skip_model_load=True)
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    m.save(out)
    print("wrote", out)


if __name__ == "__main__":
    main()
