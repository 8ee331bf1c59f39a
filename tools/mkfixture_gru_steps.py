#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkfixture_gru_steps.py: writes tests/data/crafted/pass_mil_while_unroll_t40.mlpackage
and pass_mil_while_unroll_t100.mlpackage, the fixtures of mil-while-unroll's step cap
(tests/pass_mil_while_unroll_lists.sh; docs/surgery.md, the mil-while-unroll row).

PyTorch's nn.GRU(4 -> 8) over T steps (batch 1) + Linear(8 -> 2) on the last hidden
state, seeded weights (torch.manual_seed(0)), converted by coremltools 8.3 as the
corpus's gru__mlp_fp16 is (iOS 15, fp16 compute): a while_loop of 27 non-const body
ops. T = 40 (1080 ops unrolled: over the old 16-step cap, within the ops one rewrite
lists) and T = 100 (2700 ops: refused).

Needs torch and coremltools 8.3 with its converters, e.g. the local build of
../shared/tools/coremltools-local:
  PYTHONPATH=/work/ct/src /usr/bin/python3 tools/mkfixture_gru_steps.py
"""
import os
import warnings

warnings.filterwarnings("ignore")
import coremltools as ct  # noqa: E402
import torch  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "crafted")


class GRUHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(4, 8)
        self.fc = torch.nn.Linear(8, 2)

    def forward(self, x):
        _, h = self.gru(x)
        return self.fc(h[-1])


def main():
    for steps in (40, 100):
        torch.manual_seed(0)
        m = GRUHead().eval()
        x = torch.randn(steps, 1, 4)
        traced = torch.jit.trace(m, x)
        ml = ct.convert(traced, inputs=[ct.TensorType(name="x", shape=x.shape)], convert_to="mlprogram",
                        minimum_deployment_target=ct.target.iOS15, compute_precision=ct.precision.FLOAT16,
                        skip_model_load=True)
        out = os.path.join(OUT, "pass_mil_while_unroll_t%d.mlpackage" % steps)
        ml.save(out)
        print("wrote", out)


if __name__ == "__main__":
    main()
