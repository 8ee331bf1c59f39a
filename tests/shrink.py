#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""shrink.py: a model file truncated by another process while anelint reads it
(issue #14 item 2). Every try must end with exit 4 and one line on stderr naming
the file, never a signal (SIGBUS was exit 135).

The model is made here, in a temporary directory, never committed: a
NeuralNetwork of ~64 MB whose `loop` layer runs an innerProduct with 4096x4096
fp32 weights 1000 times, so the weights are read from the mapping again and
again for seconds. Each try starts a subcommand, waits until it is running (0.4 s;
loading reads layer headers only), truncates the file to 1 MB, and checks how
the process ended. Kept under ~20 s.

  python3 tests/shrink.py build/anelint
Prints "ok ..." / "FAIL ..." per try, then "N passed, M failed, K skipped".
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
sys.dont_write_bytecode = True
from mkfixtures import array_feature, description, layer, model  # noqa: E402
from pbwire import f_bytes, f_varint  # noqa: E402

N = 4096  # innerProduct N -> N: N*N fp32 weights = 64 MB


def big_model():
    """InnerProductLayerParams{inputChannels 1, outputChannels 2, weights 20
    {floatValue 1}} in a LoopLayerParams{maxLoopIterations 1, bodyNetwork 4}."""
    ip = f_varint(1, N) + f_varint(2, N) + f_bytes(20, f_bytes(1, bytes(4 * N * N)))
    body = layer("ip", ["x"], ["t"], 140, ip) + layer("back", ["t"], ["x"], 600, b"")
    net = layer("loop", [], [], 615, f_varint(1, 1000) + f_bytes(4, body)) + \
        layer("out", ["x"], ["y"], 600, b"")
    desc = description([array_feature("x", [N])], [array_feature("y", [N])],
                       short="tests/shrink.py: 64 MB of weights read 1000 times")
    return model(4, desc, 500, net)


def main():
    anelint = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/anelint")
    tmp = tempfile.mkdtemp(prefix="anelint-shrink-")
    passed = failed = 0
    try:
        template = os.path.join(tmp, "template.mlmodel")
        with open(template, "wb") as f:
            f.write(big_model())
        tries = [["run", "{m}", "--random"], ["run", "{m}", "--random", "--seed", "2"],
                 ["run", "{m}", "--random", "--precision", "fp16"], ["fp16", "{m}"],
                 ["verify", "{m}", "{m}"]]
        for i, args in enumerate(tries):
            path = os.path.join(tmp, "big%d.mlmodel" % i)
            shutil.copyfile(template, path)
            cmd = [anelint] + [a.format(m=path) for a in args]
            what = " ".join(args).replace("{m}", "BIG")
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(0.4)
            still = p.poll() is None
            os.truncate(path, 1 << 20)
            try:
                _, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            lines = err.decode("utf-8", "replace").splitlines()
            rc = p.returncode
            why = []
            if not still:
                why.append("it ended before the file was truncated (exit %d)" % rc)
            elif rc < 0:
                why.append("killed by %s" % signal.Signals(-rc).name)
            elif rc != 4:
                why.append("exit %d, not 4" % rc)
            if still and (len(lines) != 1 or not lines[0].startswith("anelint: error: ")
                          or path not in lines[0]):
                why.append("stderr is not one error line naming the file: %r" % lines[:3])
            if why:
                failed += 1
                print("FAIL %s: %s" % (what, "; ".join(why)))
            else:
                passed += 1
                print("ok   %s: %s" % (what, lines[0]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
