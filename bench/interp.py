#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench/interp.py: fp32 inference time of anelint's interpreter against PyTorch
(Debian python3-torch) running the same architecture on the same input, in the same
script, single- and multi-threaded; and fp16 emulation against fp32. Not a test:
it prints figures and ratios (bench/README.md "Interpreter").

    /usr/bin/python3 bench/interp.py [INTERP_BENCH] [CORPUS]

INTERP_BENCH defaults to build/bench/interp_bench (`make bench-interp` builds it);
CORPUS to ../shared/corpus. The PyTorch networks are written here from the corpus
descriptions (reference/*/meta.json): torchvision's MobileNetV2 (num_classes=100)
and the ResNet-18 topology at 1/4 and full width, with batch norm folded into the
convolutions as the converter folds it (so both sides do the same arithmetic:
conv + bias, ReLU/ReLU6, add, pooling, linear). Weights are random: only time is
compared. Environment: RUNS (default 10), THREADS (default "1 2").
"""
import json
import os
import subprocess
import sys
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/bench/interp_bench")
CORPUS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "../shared/corpus")
RUNS = int(os.environ.get("RUNS", "10"))
THREADS = [int(t) for t in os.environ.get("THREADS", "1 2").split()]


def conv(cin, cout, k, s=1, groups=1):
    return nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=True)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [conv(cin, hidden, 1), nn.ReLU6()]
        layers += [conv(hidden, hidden, 3, stride, groups=hidden), nn.ReLU6(), conv(hidden, cout, 1)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


def mobilenet_v2(classes=100):
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
           (6, 320, 1, 1)]
    layers = [conv(3, 32, 3, 2), nn.ReLU6()]
    cin = 32
    for t, c, n, s in cfg:
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [conv(cin, 1280, 1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, classes)]
    return nn.Sequential(*layers)


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.c2 = conv(cin, cout, 3, stride), conv(cout, cout, 3)
        self.down = conv(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.c2(torch.relu(self.c1(x)))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


def resnet18(width=64, classes=100):
    layers = [nn.Conv2d(3, width, 7, 2, 3), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = width
    for i, mult in enumerate([1, 2, 4, 8]):
        c = width * mult
        layers += [Basic(cin, c, 1 if i == 0 else 2), Basic(c, c, 1)]
        cin = c
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


CASES = [  # (corpus model, torch builder, reference dir for the input)
    ("converted/mobilenet_v2__mlp_fp32.mlpackage", lambda: mobilenet_v2(100), "mobilenet_v2"),
    ("converted/mobilenet_v2__nn_ios13.mlmodel", lambda: mobilenet_v2(100), "mobilenet_v2"),
    ("converted/resnet18_w4__mlp_fp32.mlpackage", lambda: resnet18(16, 100), "resnet18_w4"),
    ("converted/resnet18_w4__nn_ios13.mlmodel", lambda: resnet18(16, 100), "resnet18_w4"),
    ("converted/resnet18_full__mlp_fp16.mlpackage", lambda: resnet18(64, 1000), "resnet18_full"),
]


def torch_ms(net, x, threads):
    torch.set_num_threads(threads)
    with torch.no_grad():
        net(x)
        times = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            net(x)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def anelint_run(model, inputs, threads, precision):
    out = subprocess.run([BENCH, model, inputs, str(threads), precision, str(RUNS)], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout), None


def main():
    if not os.path.exists(BENCH):
        sys.exit("bench: %s is missing (make bench-interp)" % BENCH)
    if not os.path.isdir(CORPUS):
        print("bench: %s is absent; nothing to compare" % CORPUS)
        return
    print("torch %s, %d runs each, median ms; ratio = anelint / torch (target <= 1.5); "
          "fp16/fp32 = fp16 emulation / fp32 (target <= 3)" % (torch.__version__, RUNS))
    print("%-40s %3s %10s %10s %7s %10s %7s %9s" % ("model", "thr", "torch", "anelint", "ratio", "fp16",
                                                     "fp16/32", "rss MB"))
    for rel, build, refdir in CASES:
        model = os.path.join(CORPUS, rel)
        if not os.path.exists(model):
            continue
        torch.manual_seed(0)
        net = build().eval()
        x = torch.rand(1, 3, 224, 224)
        inputs = os.path.join(CORPUS, "reference", refdir)
        for th in THREADS:
            t_ms = torch_ms(net, x, th)
            a, err = anelint_run(model, inputs, th, "fp32")
            if a is None:
                print("%-40s %3d %10.2f   anelint failed: %s" % (os.path.basename(model), th, t_ms, err[:80]))
                continue
            h, _ = anelint_run(model, inputs, th, "fp16")
            h_ms = h["median_ms"] if h else float("nan")
            print("%-40s %3d %10.2f %10.2f %7.2f %10.2f %7.2f %9.1f" % (
                os.path.basename(model), th, t_ms, a["median_ms"], a["median_ms"] / t_ms, h_ms,
                h_ms / a["median_ms"], a["peak_rss_kb"] / 1024.0))


if __name__ == "__main__":
    main()
