#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench/interp.py: inference time and peak memory of anelint's interpreter
against PyTorch (Debian python3-torch) running the same architecture on an input
of the same shape, in the same script, at 1 and 2 threads. Not a test: it prints
figures and ratios against the targets (bench/README.md "Interpreter").

    /usr/bin/python3 bench/interp.py [ANELINT] [CORPUS]

ANELINT defaults to build/anelint; CORPUS to ../shared/corpus. anelint's side is
`anelint run MODEL --repeat N --threads T -f json` (one warm-up, then N runs in one
process: the model's weights are decoded once, `ms_median` / `ms_min`); PyTorch's
side is this script re-run as a child (`--torch CASE THREADS`) that builds the
network, warms up once and times N runs under torch.set_num_threads(T). Each side
is its own process, so ru_maxrss of the child (os.wait4) is that side's peak RSS.

Models: the corpus' full-width ResNet-18 (224x224) and MobileNetV2, and two that
bench/mkmodels.py writes into build/bench/models (a transformer encoder, sequence
128, width 256; one step of a stateful decoder block, width 256, 128 cached rows).
The PyTorch networks are written here from the same descriptions, batch norm
folded as the converter folds it. Weights are random on both sides: only time and
memory are compared. Environment: RUNS (default 10), THREADS (default "1 2"),
ROUNDS (default 1: the whole table again, to see the noise).
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNS = int(os.environ.get("RUNS", "10"))
THREADS = [int(t) for t in os.environ.get("THREADS", "1 2").split()]
ROUNDS = int(os.environ.get("ROUNDS", "1"))
W, HEADS, FFN, SEQ, CACHE, POS = 256, 4, 1024, 128, 128, 64


def build(case):
    import torch
    from torch import nn

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

    def resnet18(width=64, classes=1000):
        layers = [nn.Conv2d(3, width, 7, 2, 3), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        cin = width
        for i, mult in enumerate([1, 2, 4, 8]):
            c = width * mult
            layers += [Basic(cin, c, 1 if i == 0 else 2), Basic(c, c, 1)]
            cin = c
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
        return nn.Sequential(*layers)

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(W, W) for _ in range(4))

        def heads(self, t):
            return t.reshape(1, -1, HEADS, W // HEADS).transpose(1, 2)

        def forward(self, x, k=None, v=None):
            q = self.heads(self.q(x))
            if k is None:
                k, v = self.heads(self.k(x)), self.heads(self.v(x))
            p = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / (W // HEADS) ** 0.5), -1)
            return self.o(torch.matmul(p, v).transpose(1, 2).reshape(1, -1, W))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn, self.ln1, self.ln2 = Attn(), nn.LayerNorm(W), nn.LayerNorm(W)
            self.fc1, self.fc2 = nn.Linear(W, FFN), nn.Linear(FFN, W)

        def forward(self, x):
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    class Decoder(nn.Module):
        """One step: project k, v of the new token, write row POS of the caches,
        attend over the CACHE rows, output projection, FFN (the generated model)."""

        def __init__(self):
            super().__init__()
            self.attn, self.ln1 = Attn(), nn.LayerNorm(W)
            self.fc1, self.fc2 = nn.Linear(W, FFN), nn.Linear(FFN, W)
            self.register_buffer("k_cache", torch.zeros(1, HEADS, CACHE, W // HEADS))
            self.register_buffer("v_cache", torch.zeros(1, HEADS, CACHE, W // HEADS))

        def forward(self, x):
            a = self.attn
            self.k_cache[:, :, POS:POS + 1] = a.heads(a.k(x))
            self.v_cache[:, :, POS:POS + 1] = a.heads(a.v(x))
            x = self.ln1(x + a(x, self.k_cache, self.v_cache))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))

    torch.manual_seed(0)
    if case == "resnet18_full":
        return resnet18(64, 1000), torch.rand(1, 3, 224, 224)
    if case == "mobilenet_v2":
        return mobilenet_v2(100), torch.rand(1, 3, 224, 224)
    if case == "encoder_s128_w256":
        return nn.Sequential(Layer(), Layer()), torch.randn(1, SEQ, W)
    if case == "decoder_step_w256":
        return Decoder(), torch.randn(1, 1, W)
    raise SystemExit("unknown case " + case)


def torch_child(case, threads):
    import torch
    torch.set_num_threads(threads)
    net, x = build(case)
    net.eval()
    times = []
    with torch.no_grad():
        net(x)
        c0 = time.process_time()
        for _ in range(RUNS):
            t0 = time.perf_counter()
            net(x)
            times.append((time.perf_counter() - t0) * 1e3)
        cpu = (time.process_time() - c0) * 1e3 / RUNS
    times.sort()
    print(json.dumps({"ms_median": times[len(times) // 2], "ms_min": times[0], "cpu_ms": cpu}))


def measured(argv, env=None):
    """(json, rss MB, error, CPU s) of one child process, ru_maxrss and CPU time
    (user + system) from wait4."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read().decode()
    err = p.stderr.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    if status != 0:
        return None, 0.0, err.strip()[:120], 0.0
    doc = out[out.index("{"):] if "{" in out else "{}"
    return json.loads(doc), ru.ru_maxrss / 1024.0, None, ru.ru_utime + ru.ru_stime


def torch_env(threads):
    """torch.set_num_threads sets OpenMP's threads, not those of the OpenBLAS that
    Debian's torch calls for linear / matmul: without these, torch's "1 thread"
    ran its matrix products on every core (measured: 0.97 CPUs busy against 0.66
    with OPENBLAS_NUM_THREADS=1, the encoder 4.7 ms against 7.4)."""
    env = dict(os.environ)
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    return env


def cases(corpus):
    models = os.path.join(ROOT, "build", "bench", "models")
    if not os.path.isdir(os.path.join(models, "decoder_step_w256.mlpackage")):
        subprocess.run([sys.executable, os.path.join(HERE, "mkmodels.py"), models], check=True,
                       stdout=subprocess.DEVNULL)
    return [
        ("resnet18_full", os.path.join(corpus, "converted/resnet18_full__mlp_fp16.mlpackage"),
         ["--inputs", os.path.join(corpus, "reference/resnet18_full")]),
        ("mobilenet_v2", os.path.join(corpus, "converted/mobilenet_v2__mlp_fp32.mlpackage"),
         ["--inputs", os.path.join(corpus, "reference/mobilenet_v2")]),
        ("encoder_s128_w256", os.path.join(models, "encoder_s128_w256.mlpackage"), ["--random"]),
        ("decoder_step_w256", os.path.join(models, "decoder_step_w256.mlpackage"), ["--random"]),
    ]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--torch":
        torch_child(sys.argv[2], int(sys.argv[3]))
        return
    anelint = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/anelint")
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "../shared/corpus")
    if not os.path.exists(anelint):
        sys.exit("bench: %s is missing (make)" % anelint)
    # torch is imported by the children only: a child's ru_maxrss counts the pages
    # it inherited from this process until exec, so this one stays small
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        sys.exit("bench: python3-torch is missing (sh tools/install-deps.sh --bench)")
    version = probe.stdout.strip()
    load = os.getloadavg()
    print("torch %s, %d runs after 1 warm-up, median ms; ratio = anelint / torch (target <= 1.0 at 1 "
          "thread); speedup = 1-thread / 2-thread anelint median (target >= 1.6 on ResNet-18); "
          "rss = anelint / torch peak RSS (target <= 1.5); load average %.1f %.1f %.1f"
          % (version, RUNS, load[0], load[1], load[2]))
    print("cpu = CPU ms per run (user + system; torch: process_time over its runs; anelint: the "
          "CPU time of --repeat M (M runs of ~300 ms in all) less that of --repeat 1, over M - 1), less sensitive to other "
          "processes than wall time; cpu ratio = anelint / torch")
    print("%-20s %3s %9s %9s %9s %6s %8s %8s %6s %8s %8s %6s" % (
        "model", "thr", "torch", "anelint", "min", "ratio", "torchMB", "anelMB", "rss", "tcpu", "acpu",
        "cpu"))
    for rnd in range(ROUNDS):
        for name, model, args in cases(corpus):
            if not os.path.exists(model):
                print("%-20s skipped: %s is absent" % (name, model))
                continue
            one = None
            for th in THREADS:
                t, t_rss, terr, _ = measured([sys.executable, os.path.abspath(__file__), "--torch", name,
                                              str(th)], torch_env(th))
                argv = [anelint, "run", model] + args + ["--threads", str(th), "-f", "json", "--repeat"]
                a, a_rss, aerr, _ = measured(argv + [str(RUNS)])
                # CPU time: enough runs for ~300 ms of work, so start-up jitter fades
                n_cpu = max(RUNS, int(300.0 / max(a["ms_median"], 0.01))) if a else RUNS
                aN, _, _, aN_cpu = measured(argv + [str(n_cpu)])
                a1, _, _, a1_cpu = measured(argv + ["1"])
                if t is None or a is None or a1 is None or aN is None:
                    print("%-20s %3d failed: %s" % (name, th, terr or aerr))
                    continue
                if th == 1:
                    one = a["ms_median"]
                extra = ""
                if th != 1 and one:
                    extra = "  speedup %.2f" % (one / a["ms_median"])
                acpu = max(aN_cpu - a1_cpu, 0.0) * 1e3 / max(n_cpu - 1, 1)
                print("%-20s %3d %9.2f %9.2f %9.2f %6.2f %8.1f %8.1f %6.2f %8.2f %8.2f %6.2f%s" % (
                    name, th, t["ms_median"], a["ms_median"], a["ms_min"], a["ms_median"] / t["ms_median"],
                    t_rss, a_rss, a_rss / t_rss, t["cpu_ms"], acpu, acpu / t["cpu_ms"], extra))
        if rnd + 1 < ROUNDS:
            print("-- again")


if __name__ == "__main__":
    main()
