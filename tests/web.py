#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/web.py: the page (web/, make wasm) in the system's headless Chromium.

Loads build-wasm/web/index.html from file://, gives it models through its file
inputs (DOM.setFileInputFiles: a .mlmodel, .mlpackage and .mlmodelc folders, a
.zip), and checks that the JSON the page shows is byte for byte the CLI's
`check -f json` with the same options; also an unreadable model (a one-line
error, no hang), the HTML and SARIF downloads' text against the CLI's, and that
the page made no network request (anything but file:, blob:, data:, about:).
Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
fd 3 in, fd 4 out, NUL-terminated JSON), with Python's standard library only.

usage: tests/web.py --anelint build/anelint --web build-wasm/web [--shots DIR]
Prints "N passed, M failed, K skipped"; exit 1 on a failure."""
import argparse, base64, io, json, os, select, shutil, subprocess, sys, tempfile, time, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")


class Chromium:
    """One headless Chromium, one page, over the DevTools pipe."""

    def __init__(self, binary, profile):
        r_in, w_in = os.pipe()   # our writes -> its fd 3
        r_out, w_out = os.pipe()  # its fd 4 -> our reads
        def child_fds():
            os.dup2(r_in, 3)
            os.dup2(w_out, 4)
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + profile, "--window-size=1280,800", "about:blank"],
            # the child keeps 3 and 4 (dup2'd before the other descriptors are closed)
            pass_fds=(3, 4), preexec_fn=child_fds, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile, "chromium.log"), "wb"))
        os.close(r_in)
        os.close(w_out)
        self.w, self.r = w_in, r_out
        self.profile = profile
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        sid = session if session is not None else self.session
        if sid:
            msg["sessionId"] = sid
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        end = time.time() + timeout
        while True:
            m = self.read(end - time.time())
            if m is None:
                raise TimeoutError(method)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.on_event(m)

    def read(self, timeout):
        while b"\0" not in self.buf:
            if timeout <= 0:
                return None
            ready, _, _ = select.select([self.r], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def on_event(self, m):
        if "method" not in m:
            return
        self.events.append(m)
        # every worker the page starts: watch its requests too, then let it run
        if m["method"] == "Target.attachedToTarget":
            sid = m["params"]["sessionId"]
            for method in ("Network.enable", "Runtime.enable", "Runtime.runIfWaitingForDebugger"):
                self.next_id += 1
                os.write(self.w, json.dumps({"id": self.next_id, "method": method, "params": {},
                                             "sessionId": sid}).encode() + b"\0")

    def pump(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            m = self.read(end - time.time())
            if m is None:
                return
            self.on_event(m)

    def open(self, url):
        t = self.send("Target.createTarget", {"url": "about:blank"})
        a = self.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})
        self.session = a["sessionId"]
        self.send("Network.enable")
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Log.enable")
        self.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False,
                                             "flatten": True})
        self.send("Page.navigate", {"url": url})

    def eval(self, expr, timeout=60):
        r = self.send("Runtime.evaluate", {"expression": expr, "awaitPromise": True,
                                             "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_for(self, expr, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            v = self.eval(expr)
            if v:
                return v
            self.pump(0.05)
        raise TimeoutError("%s; the page said: %s" % (expr, self.console()[-8:]))

    def console(self):
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
            elif e["method"] == "Log.entryAdded":
                out.append("log: " + p.get("entry", {}).get("text", ""))
        return out

    def set_files(self, selector, paths):
        doc = self.send("DOM.getDocument", {"depth": 0})
        node = self.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": selector})
        self.send("DOM.setFileInputFiles", {"nodeId": node["nodeId"], "files": paths})

    def screenshot(self, path):
        r = self.send("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def renderer_kb(self):
        """(VmRSS, VmHWM) in kB of the page's renderer: of this browser's renderer
        processes the one using most memory (the page's worker and its wasm instance
        live in it; the others hold about:blank). None off Linux."""
        best = None
        for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ")  # chromium rewrites its title: one string
                if b"--type=renderer" not in cmd or b"--user-data-dir=" + self.profile.encode() + b" " not in cmd:
                    continue
                mem = {}
                with open("/proc/%s/status" % pid) as f:
                    for line in f:
                        k, _, v = line.partition(":")
                        if k in ("VmRSS", "VmHWM"):
                            mem[k] = int(v.split()[0])
                if "VmRSS" in mem and (best is None or mem["VmRSS"] > best[0]):
                    best = (mem["VmRSS"], mem.get("VmHWM", 0))
            except OSError:
                continue
        return best

    def key(self, key, code=None, vk=0):
        """One key pressed and released, as the keyboard sends it (focus moves on Tab)."""
        for t in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": t, "key": key, "code": code or key,
                                                  "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk})

    def size(self, width, height):
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})

    def worker_sessions(self):
        return [e["params"]["sessionId"] for e in self.events if e["method"] == "Target.attachedToTarget"
                and e["params"].get("targetInfo", {}).get("type") in ("worker", "dedicated_worker")]

    def js_heap(self):
        """JSHeapUsedSize (bytes) of the page and of its live workers (Performance.getMetrics)."""
        total = 0
        for sid in [self.session] + self.worker_sessions():
            try:
                self.send("Performance.enable", session=sid, timeout=10)
                m = self.send("Performance.getMetrics", session=sid, timeout=10)
            except (RuntimeError, TimeoutError):
                continue  # a worker already terminated
            total += int(next((x["value"] for x in m.get("metrics", []) if x["name"] == "JSHeapUsedSize"), 0))
        return total

    def requests(self):
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cli_json(anelint, model, args):
    """`check -f json` of the CLI, run beside the model as the page runs it (cwd = its parent)."""
    parent, name = os.path.split(os.path.abspath(model))
    r = subprocess.run([os.path.abspath(anelint), "check", "-f", "json"] + args + [name], cwd=parent,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode()


def cli_fix(anelint, model, args, work):
    """`anelint fix` of a copy of the model in work/, beside it as the page writes it
    (NAME.fixed.EXT): (exit status, stdout, stderr, the output's path)."""
    name = os.path.basename(model)
    copy = os.path.join(work, name)
    (shutil.copytree if os.path.isdir(model) else shutil.copyfile)(model, copy)
    stem, ext = os.path.splitext(name)
    out = stem + ".fixed" + ext
    # the page is built without a BLAS (make wasm: BLAS=none): the proof's figures are
    # those of the interpreter's own loops (a BLAS's sgemm rounds differently in the
    # last bits); the rewritten model's bytes do not depend on it
    r = subprocess.run([os.path.abspath(anelint), "fix"] + args + ["-o", out, name], cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, ANELINT_BLAS="none"))
    return r.returncode, r.stdout.decode(), r.stderr.decode(), os.path.join(work, out)


def tree_bytes(path):
    """{relative path: bytes} of every file under a folder (or of the one file)."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return {"": f.read()}
    out = {}
    for dp, _, fs in os.walk(path):
        for fn in fs:
            full = os.path.join(dp, fn)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = f.read()
    return out


def page_fixed_base64(browser):
    """The bytes the page's fix tab offers for download (base64), read in the page."""
    return browser.eval("(() => { const b = page.fixed ? page.fixed.bytes : new Uint8Array(0); let s = '';"
                        " for (let i = 0; i < b.length; i += 32768) s += String.fromCharCode.apply(null, b.subarray(i, i + 32768));"
                        " return btoa(s); })()")


def fixed_tree(data, name, cli_out, ok):
    """What the page offers after a fix (a .zip of the package, or the .mlmodel) as
    {relative path: bytes}, as tree_bytes gives the CLI's output."""
    if not name.endswith(".zip"):
        return {"": data}
    tree = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        ok(zf.testzip() is None, "fix: %s: the CRCs" % name)
        top = os.path.basename(cli_out) + "/"
        for zi in zf.infolist():
            ok(zi.filename.startswith(top), "fix: %s holds %s, outside %s" % (name, zi.filename, top))
            tree[zi.filename[len(top):]] = zf.read(zi)
    return tree


def cli_format(anelint, model, fmt, args):
    parent, name = os.path.split(os.path.abspath(model))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "report." + fmt)
        subprocess.run([os.path.abspath(anelint), "check", "-f", fmt] + args + [name, "-o", out],
                       cwd=parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out, encoding="utf-8") as f:
            return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anelint", default="build/anelint")
    ap.add_argument("--web", default="build-wasm/web")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--shots", help="save screenshots of the main views here")
    o = ap.parse_args()
    passed = failed = skipped = 0

    def ok(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)
        return cond

    data = os.path.join(ROOT, "tests", "data")
    cases = [  # (input kind, path, options)
        ("file", os.path.join(data, "converted", "pool_k15_s3__nn_ios13.mlmodel"), []),
        ("file", os.path.join(data, "converted", "arange_dynamic__nn_ios13.mlmodel"),
         ["--target", "a17", "--os", "ios17"]),
        ("dir", os.path.join(data, "converted", "arange_dynamic__mlp_fp16.mlpackage"), []),
        ("dir", os.path.join(data, "converted", "broadcast_mul_chw_c11__mlp_ios17_fp16.mlpackage"),
         ["--compute-units", "cpu-and-ne"]),
        ("dir", os.path.join(data, "converted", "arange_dynamic__mlp_fp16.mlpackage"), ["--target", "all"]),
        ("file", os.path.join(data, "converted", "pool_k15_s3__nn_ios13.mlmodel"),
         ["--target", "a15", "--os", "all", "--compute-units", "cpu-and-gpu"]),
    ]
    compiled = sorted(d for d in os.listdir(os.path.join(data, "compiled")) if d.endswith(".mlmodelc")) \
        if os.path.isdir(os.path.join(data, "compiled")) else []
    for c in compiled[:2]:
        cases.append(("dir", os.path.join(data, "compiled", c), []))
    if os.path.isdir(CORPUS):
        # every model of the corpus's real, modern and compiled sets (about 50: ~15 s),
        # among them a multifunction package, a stateful decoder and espresso folders
        for sub in ("real", "modern", "compiled"):
            d = os.path.join(CORPUS, sub)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                p = os.path.join(d, name)
                kind = "dir" if os.path.isdir(p) else "file"
                if kind == "file" and not name.endswith(".mlmodel"):
                    continue
                if kind == "dir" and not name.endswith((".mlpackage", ".mlmodelc")):
                    continue
                if os.path.getsize(p) > 64 << 20 if kind == "file" else False:
                    continue
                cases.append((kind, p, []))
    else:
        skipped += 1
        print("skip: the shared corpus (../shared/corpus) is absent")

    profile = tempfile.mkdtemp(prefix="anelint-web-")
    browser = Chromium(o.chromium, profile)
    try:
        index = os.path.abspath(os.path.join(o.web, "index.html"))
        browser.open("file://" + index)
        browser.wait_for("window.anelintReady === true", timeout=60)
        for kind, path, args in cases:
            name = os.path.basename(path)
            browser.eval("window.anelintLast = null; document.getElementById('units').value = 'all';"
                         "document.getElementById('target').selectedIndex = [...document.getElementById('target').options].findIndex(o => o.text.includes('(default)'));"
                         "document.getElementById('os').value = ''; true")
            # the options as the page's selects take them
            opts = dict(zip(args[0::2], args[1::2]))
            if "--target" in opts:
                browser.eval("document.getElementById('target').value = %s; true" % json.dumps(opts["--target"]))
            if "--os" in opts:
                browser.eval("document.getElementById('os').value = %s; true" % json.dumps(opts["--os"]))
            if "--compute-units" in opts:
                browser.eval("document.getElementById('units').value = %s; true" % json.dumps(opts["--compute-units"]))
            if kind == "file":
                browser.set_files("#pick-file", [os.path.abspath(path)])
            else:
                browser.set_files("#pick-dir", [os.path.abspath(path)])
            t0 = time.time()
            last = browser.wait_for("window.anelintLast", timeout=120)
            page_json = last.get("json")
            rc, want = cli_json(o.anelint, path, ["--no-config"] + args)
            if not ok(page_json == want, "%s %s: the page's JSON differs from the CLI's (page: %s)"
                      % (name, " ".join(args), (page_json or last.get("stderr", ""))[:300])):
                if page_json:
                    keep = os.path.join(o.web, "..", "web-test")
                    os.makedirs(keep, exist_ok=True)
                    with open(os.path.join(keep, name + ".page.json"), "w") as f:
                        f.write(page_json)
                    with open(os.path.join(keep, name + ".cli.json"), "w") as f:
                        f.write(want)
                    print("  diff %s/%s.page.json %s/%s.cli.json" % (keep, name, keep, name))
            ok(last.get("status") == rc, "%s: exit status %s in the page, %s from the CLI"
               % (name, last.get("status"), rc))
            print("  %s (%s): %.0f ms in the page" % (name, kind, (time.time() - t0) * 1000))

        # a package with a 500 MB weight.bin (sparse: no disk spent): read by records
        # through File.slice, so the check takes little time and the module's memory
        # stays small (the bounds: 2 s, 150 MB)
        with tempfile.TemporaryDirectory() as d:
            big = os.path.join(d, "big.mlpackage")
            shutil.copytree(os.path.join(data, "converted", "transformer_encoder__mlp_ios17_fp16.mlpackage"), big)
            for dp, _, fs in os.walk(big):
                if "weight.bin" in fs:
                    os.truncate(os.path.join(dp, "weight.bin"), 500 << 20)
            browser.eval("window.anelintLast = null; true")
            browser.set_files("#pick-dir", [big])
            t0 = time.time()
            last = browser.wait_for("window.anelintLast", timeout=60)
            wall = time.time() - t0
            ok(last.get("json") == cli_json(o.anelint, big, ["--no-config"])[1],
               "500 MB weight.bin: the page's JSON differs from the CLI's: %s" % last.get("stderr", "")[:300])
            mem = last.get("memory") or 0
            # the tab's memory: the JS heaps of the page and its worker (DevTools'
            # Performance.getMetrics, JSHeapUsedSize) and the wasm instance's memory
            heap = browser.js_heap()
            # memory is checked, time only printed (the 2 s target is measured, not a timed test:
            # a busy CI machine must not fail it); 30 s stands for "no hang"
            ok(wall < 30 and mem + heap < 150 << 20, "500 MB weight.bin: %.2f s, %.0f MB of wasm memory + %.0f MB JS heaps"
               % (wall, mem / 1e6, heap / 1e6))
            print("  big.mlpackage (500 MB weight.bin): %.0f ms from the pick, %.0f ms in main(), %.1f MB wasm memory"
                  " + %.1f MB JS heaps, renderer RSS %s kB" % (wall * 1000, last.get("ms") or 0, mem / 1e6, heap / 1e6,
                                                               browser.renderer_kb()))

        # a 500 MB NeuralNetwork .mlmodel (tools/mkmodel.py big, as bench/run.sh): its
        # protobuf structure is read, its weights are not (src/base/file.c, read_sparse)
        with tempfile.TemporaryDirectory() as d:
            big = os.path.join(d, "big.mlmodel")
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "mkmodel.py"), "big", big, "--mb", "500"],
                           stdout=subprocess.DEVNULL, check=True)
            browser.eval("window.anelintLast = null; true")
            rss0 = browser.renderer_kb()
            browser.set_files("#pick-file", [big])
            t0 = time.time()
            last = browser.wait_for("window.anelintLast", timeout=120)
            wall = time.time() - t0
            rss = browser.renderer_kb()
            ok(last.get("json") == cli_json(o.anelint, big, ["--no-config"])[1],
               "500 MB .mlmodel: the page's JSON differs from the CLI's: %s" % last.get("stderr", "")[:300])
            # time only: the renderer's peak (VmHWM) includes Chromium's own ~100 MB and
            # what earlier models left for the garbage collector; it is printed
            ok(wall < 30, "500 MB .mlmodel: %.2f s (a hang)" % wall)
            # the tab's memory: the wasm instance reserves the file's size (read_sparse's
            # buffer, src/base/file.c) but touches only what the parser reads (~5 MB), so
            # the renderer's resident memory must not grow by the model's size
            if rss0 and rss:
                ok(rss[0] - rss0[0] < 150 << 10, "500 MB .mlmodel: the renderer's RSS grew by %d kB" % (rss[0] - rss0[0]))
            print("  big.mlmodel (500 MB): %.0f ms from the pick, %.0f ms in main(), %.1f MB wasm memory"
                  " (mostly never touched) + %.1f MB JS heaps, renderer (RSS, peak) %s -> %s kB"
                  % (wall * 1000, last.get("ms") or 0, (last.get("memory") or 0) / 1e6, browser.js_heap() / 1e6, rss0, rss))

        # a .zip of a package: the page unpacks it and checks what is inside
        pkg = os.path.join(data, "converted", "arange_dynamic__mlp_fp16.mlpackage")
        with tempfile.TemporaryDirectory() as d:
            z = os.path.join(d, "arange_dynamic__mlp_fp16.mlpackage.zip")
            with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
                for dp, _, fs in os.walk(pkg):
                    for fn in fs:
                        full = os.path.join(dp, fn)
                        zf.write(full, os.path.relpath(full, os.path.dirname(pkg)))
            browser.eval("window.anelintLast = null; true")
            browser.set_files("#pick-file", [z])
            last = browser.wait_for("window.anelintLast", timeout=60)
            ok(last.get("json") == cli_json(o.anelint, pkg, ["--no-config"])[1],
               "a .zip of a package: the page's JSON differs from the CLI's: %s" % last.get("stderr", "")[:300])
            # and fixed from the .zip's entries (Blobs, not disk files): the CLI's bytes
            got = browser.eval("document.getElementById('allow').value = ''; document.getElementById('proof').value = '';"
                               " anelintFix()", timeout=60)
            with tempfile.TemporaryDirectory() as work:
                rc, out, err, cli_out = cli_fix(o.anelint, pkg, [], work)
                data64 = page_fixed_base64(browser)
                ok(got["status"] == rc == 0 and got["stdout"] == out and
                   fixed_tree(base64.b64decode(data64), got["name"] or "", cli_out, ok) == tree_bytes(cli_out),
                   "a .zip of a package: fixed in the page (exit %s) %r, not as the CLI" % (got["status"], got["stderr"][:200]))

        # downloads: the HTML and SARIF text the page offers is the CLI's (last model: the zip's package)
        for fmt in ("sarif", "html"):
            got = browser.eval("(async () => { return await output(%s); })()" % json.dumps(fmt))
            ok(got == cli_format(o.anelint, pkg, fmt, ["--no-config"]),
               "the page's %s differs from the CLI's" % fmt)
        # the plan tab: `plan` as the command line prints it (segments, the cheapest fixes
        # and their `anelint fix` commands)
        got = browser.eval("(async () => { return await planText(); })()")
        parent, pname = os.path.split(pkg)
        want = subprocess.run([os.path.abspath(o.anelint), "plan", "--color", "never", "--no-config", pname],
                              cwd=parent, stdout=subprocess.PIPE).stdout.decode()
        ok(got == want and "segment" in want, "the page's plan differs from the CLI's: %r" % (got or "")[:200])
        if o.shots:
            os.makedirs(o.shots, exist_ok=True)
            browser.eval("selectTab('plan'); true")
            browser.pump(1.0)
            browser.screenshot(os.path.join(o.shots, "plan.png"))
            browser.eval("selectTab('layers'); true")
            browser.screenshot(os.path.join(o.shots, "layers.png"))
            browser.eval("selectTab('report'); true")
            browser.pump(1.5)
            browser.screenshot(os.path.join(o.shots, "report.png"))
            browser.eval("selectTab('layers'); true")

        # an unreadable model: a one-line error in the page, the CLI's exit status, no hang
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "truncated.mlmodel")
            with open(os.path.join(data, "converted", "pool_k15_s3__nn_ios13.mlmodel"), "rb") as f:
                head = f.read(40)
            with open(bad, "wb") as f:
                f.write(head)
            browser.eval("window.anelintLast = null; true")
            browser.set_files("#pick-file", [bad])
            last = browser.wait_for("window.anelintLast", timeout=30)
            rc, want = cli_json(o.anelint, bad, ["--no-config"])
            shown = browser.eval("document.getElementById('status').textContent")
            ok(last.get("status") == rc and rc != 0, "a truncated model: exit %s in the page, %s from the CLI"
               % (last.get("status"), rc))
            ok(bool(shown) and "\n" not in shown and "truncated.mlmodel" in shown,
               "a truncated model: the page says %r" % shown)
            ok((last.get("json") or "") == (want if want else ""), "a truncated model: JSON differs")
            if o.shots:
                browser.screenshot(os.path.join(o.shots, "error.png"))

        # fix in the page: the same passes, proof and messages as `anelint fix`, and the
        # download's bytes (a .zip of a package, unzipped; a .mlmodel as it is) equal to
        # the CLI's output for the same options
        downloads = os.path.join(profile, "downloads")
        os.makedirs(downloads, exist_ok=True)
        browser.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads},
                     session="")
        fix_cases = [  # (model, --allow, page options)
            (os.path.join(data, "converted", "lstm__nn_ios14.mlmodel"), "", []),
            (os.path.join(data, "converted", "gru__mlp_fp16.mlpackage"), "", []),
            (os.path.join(data, "converted", "cumsum__mlp_fp16.mlpackage"), "reassociate", ["--target", "a17"]),
            (os.path.join(data, "converted", "pool_k15_s3__nn_ios13.mlmodel"), "", ["--os", "ios17"]),
            (os.path.join(data, "crafted", "fix_avgpool.mlmodel"), "approximate", []),
        ]
        # refused by its proof (exit 1): the interpreter cannot run the whole model on
        # random inputs (gather indices out of range); nothing is offered
        fix_cases.append((os.path.join(data, "converted", "builder__nd_broadcastable_gather.mlmodel"), "",
                          ["--proof", "whole"]))
        if os.path.isdir(CORPUS):  # corpus models the passes rewrite with --allow approximate
            for sub, name in (("real", "ActivityClassifier_GRU_mlprogram.mlpackage"), ("real", "CARN_superres_spec1.mlmodel"),
                              ("real", "NeuralMcNeuralNet.mlmodel"),  # refused by its proof (exit 1)
                              ("modern", "kv_decoder_h64_nh2_s32.mlpackage"), ("modern", "mlp_int4_block32_ios18.mlpackage")):
                if os.path.exists(os.path.join(CORPUS, sub, name)):
                    fix_cases.append((os.path.join(CORPUS, sub, name), "approximate", []))
        if compiled:  # refused: a compiled model has no source to rewrite (exit 3)
            fix_cases.append((os.path.join(data, "compiled", compiled[0]), "", []))
        with tempfile.TemporaryDirectory() as work0:
            big = os.path.join(work0, "big200.mlmodel")
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "mkmodel.py"), "big", big, "--mb", "200"],
                           stdout=subprocess.DEVNULL, check=True)
            fix_cases.append((big, "", []))  # the stated size: up to 256 MB in the page
            for path, allow, args in fix_cases:
                name = os.path.basename(path)
                kind = "dir" if os.path.isdir(path) else "file"
                browser.eval("window.anelintLast = null; document.getElementById('units').value = 'all';"
                             "document.getElementById('target').selectedIndex = [...document.getElementById('target').options].findIndex(o => o.text.includes('(default)'));"
                             "document.getElementById('os').value = ''; true")
                opts = dict(zip(args[0::2], args[1::2]))
                browser.eval("document.getElementById('proof').value = %s; true" % json.dumps(opts.get("--proof", "")))
                for flag, sel in (("--target", "target"), ("--os", "os")):
                    if flag in opts:
                        browser.eval("document.getElementById('%s').value = %s; true" % (sel, json.dumps(opts[flag])))
                browser.set_files("#pick-file" if kind == "file" else "#pick-dir", [os.path.abspath(path)])
                browser.wait_for("window.anelintLast", timeout=120)
                for f in os.listdir(downloads):
                    os.unlink(os.path.join(downloads, f))
                t0 = time.time()
                got = browser.eval("document.getElementById('allow').value = %s; anelintFix()" % json.dumps(allow),
                                   timeout=180)
                wall = time.time() - t0
                with tempfile.TemporaryDirectory() as work:
                    rc, out, err, cli_out = cli_fix(o.anelint, path, args + (["--allow", allow] if allow else []), work)
                    ok(got["status"] == rc and got["stdout"] == out and got["stderr"] == err,
                       "fix %s: the page said (exit %s) %r%r, the CLI (exit %s) %r%r"
                       % (name, got["status"], got["stderr"][:200], got["stdout"][:300], rc, err[:200], out[:300]))
                    if rc != 0:
                        ok(not got.get("name") and browser.eval("document.getElementById('fix-download').disabled"),
                           "fix %s: refused, yet a download is offered" % name)
                        print("  fix %s: refused as by the CLI (exit %d: %s)" % (name, rc, (err or out).strip().splitlines()[-1][:100]))
                        continue
                    browser.eval("document.getElementById('fix-download').click(); true")
                    want_name = got["name"]
                    saved = os.path.join(downloads, want_name)
                    end = time.time() + 60
                    while time.time() < end and not (os.path.exists(saved) and os.path.getsize(saved) == got["size"]):
                        browser.pump(0.1)
                    if not ok(os.path.exists(saved), "fix %s: no download %s (%s)" % (name, want_name, os.listdir(downloads))):
                        continue
                    with open(saved, "rb") as f:
                        page_tree = fixed_tree(f.read(), want_name, cli_out, ok)
                    want = tree_bytes(cli_out)
                    ok(page_tree == want, "fix %s: the page's %s differs from the CLI's output (%s vs %s)"
                       % (name, want_name, sorted(page_tree), sorted(want)))
                    if o.shots and name.startswith("gru"):
                        os.makedirs(o.shots, exist_ok=True)
                        browser.eval("selectTab('fix'); true")
                        browser.screenshot(os.path.join(o.shots, "fix.png"))
                        browser.eval("selectTab('graph'); true")
                    print("  fix %s%s: %.0f ms in the page (main() %.0f ms, %.0f MB wasm memory), %s %d bytes, same bytes as the CLI's"
                          % (name, " --allow " + allow if allow else "", wall * 1000, got.get("ms") or 0,
                             (got.get("memory") or 0) / 1e6, want_name, got["size"]))
            # over the stated size: a one-line message, nothing run
            r = browser.eval("(() => { const keep = page.files; page.files = [{ path: 'x.mlmodel', file: new File([new Uint8Array(1)], 'x.mlmodel') }];"
                             " Object.defineProperty(page.files[0].file, 'size', { value: 300 * 1048576 });"
                             " return fixModel().then((r) => { page.files = keep; return r; }); })()")
            ok(r["status"] == -1 and "256 MB" in r["stderr"] and "\n" not in r["stderr"], "fix over 256 MB: %r" % (r,))

        # the graph and the keyboard: Tab reaches the op list, arrow keys move, Enter
        # opens the op's rule / reason / evidence / confidence, Esc closes and gives the
        # focus back; screenshots at 1280x800 and a tablet's 768x1024
        browser.eval("window.anelintLast = null; document.getElementById('units').value = 'all'; document.getElementById('os').value = '';"
                     "document.getElementById('target').selectedIndex = [...document.getElementById('target').options].findIndex(o => o.text.includes('(default)')); true")
        gpath = os.path.join(data, "converted", "gru__mlp_fp16.mlpackage")
        browser.set_files("#pick-dir", [gpath])
        browser.wait_for("window.anelintLast", timeout=60)
        browser.eval("selectTab('graph'); document.activeElement && document.activeElement.blur(); window.focus(); true")
        n_ops = browser.eval("page.ops.length")
        setsize = browser.eval("+document.querySelector('#oplist li[role=option]').getAttribute('aria-setsize')")
        ok(setsize == n_ops, "the op list's options say %s ops, the page has %s" % (setsize, n_ops))
        n_nodes = browser.eval("document.querySelectorAll('#graph g.node').length")
        colours = browser.eval("[...new Set([...document.querySelectorAll('#graph g.node')].map(g => getComputedStyle(g.querySelector('rect')).fill))].length")
        ok(n_ops > 10 and n_nodes == n_ops and colours >= 1, "the graph: %s ops listed, %s drawn" % (n_ops, n_nodes))
        # the units drawn are the JSON's (non-const ops, in model order)
        d = json.loads(browser.eval("page.outputs.json"))
        want_units = [l["unit"] for m in d["models"] for l in m["layers"] if l["type"] != "const"]
        got_units = browser.eval("[...document.querySelectorAll('#graph g.node')].map(g => [...g.classList].find(c => c.startsWith('u-')).slice(2))")
        ok(got_units == want_units, "the graph's colours are not the JSON's units")
        order = []
        for _ in range(16):
            browser.key("Tab", vk=9)
            order.append(browser.eval("document.activeElement.id || document.activeElement.tagName"))
            if order[-1] == "oplist":
                break
        ok(order[-1] == "oplist" and "drop" in order and "tab-graph" in order and order.index("drop") < order.index("tab-graph"),
           "Tab order: %s" % order)
        print("  Tab order: %s" % " > ".join(order))
        for _ in range(3):
            browser.key("ArrowDown", vk=40)
        sel = browser.eval("document.getElementById('oplist').getAttribute('aria-activedescendant')")
        ok(sel == "op-3", "three ArrowDowns select op 3, not %s" % sel)
        browser.key("Enter", vk=13)
        det = browser.eval("({ open: !document.getElementById('detail').classList.contains('hidden'),"
                           " focus: document.activeElement.id, text: document.getElementById('detail').innerText })")
        op3 = [l for m in d["models"] for l in m["layers"] if l["type"] != "const"][3]
        ok(det["open"] and det["focus"] == "detail" and op3["name"] in det["text"] and "confidence" in det["text"]
           and all(f["rule"] in det["text"] for f in op3.get("findings", [])) and "reason" in det["text"],
           "Enter opens op 3's details: %r" % (det,))
        if any(f.get("rule") for f in op3.get("findings", [])):
            ok("evidence:" in det["text"], "op 3's details give its rule's evidence")
        if o.shots:
            os.makedirs(o.shots, exist_ok=True)
            browser.screenshot(os.path.join(o.shots, "graph-detail-1280.png"))
        browser.key("Escape", vk=27)
        det = browser.eval("({ open: !document.getElementById('detail').classList.contains('hidden'), focus: document.activeElement.id })")
        ok(not det["open"] and det["focus"] == "oplist", "Esc closes the details, focus back on the list: %r" % (det,))
        # a click on a graph node opens its details too
        browser.eval("document.getElementById('node-5').dispatchEvent(new MouseEvent('click', { bubbles: true })); true")
        ok(browser.eval("!document.getElementById('detail').classList.contains('hidden') && "
                        "document.getElementById('oplist').getAttribute('aria-activedescendant') === 'op-5'"),
           "a click on a node selects and opens it")
        browser.key("Escape", vk=27)
        for w, h in ((1280, 800), (768, 1024)):
            browser.size(w, h)
            browser.pump(0.3)
            # readable: nothing wider than the window but the graph and tables' own scrollers
            over = browser.eval("document.documentElement.scrollWidth - window.innerWidth")
            ok(over <= 0, "%dx%d: the page is %d px wider than the window" % (w, h, over))
            if o.shots:
                browser.screenshot(os.path.join(o.shots, "graph-%d.png" % w))
        browser.send("Emulation.clearDeviceMetricsOverride")

        # a model of 4000 ops: the list draws the rows in view only, End reaches the
        # last op, the graph draws GRAPH_MAX_OPS (3000) and says so
        with tempfile.TemporaryDirectory() as d:
            many = os.path.join(d, "chain4000.mlmodel")
            subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); sys.dont_write_bytecode = True\n"
                            "from mkfixtures import array_feature, description, layer, model, nn_body, pool\n"
                            "x = array_feature('x', [1, 8, 64, 64])\n"
                            "ls = [layer('p%%d' %% i, ['x' if i == 0 else 'p%%d' %% (i - 1)], ['p%%d' %% i], 120, pool(0, [2, 2], [2, 2])) for i in range(4000)]\n"
                            "open(sys.argv[1], 'wb').write(model(4, description([x], [array_feature('p3999', [])], short='chain'), 500, nn_body(ls)))"
                            % os.path.join(ROOT, "tools"), many], check=True)
            browser.eval("window.anelintLast = null; true")
            browser.set_files("#pick-file", [many])
            t0 = time.time()
            browser.wait_for("window.anelintLast && window.anelintLast.status === 0", timeout=60)  # not its 10 MB of JSON
            wall = time.time() - t0
            browser.eval("selectTab('graph'); document.getElementById('oplist').focus(); true")
            browser.key("End", vk=35)
            r = browser.eval("({ rows: document.querySelectorAll('#oplist li[role=option]').length, n: page.ops.length,"
                             " active: document.getElementById('oplist').getAttribute('aria-activedescendant'),"
                             " drawn: !!document.getElementById('op-3999'), nodes: document.querySelectorAll('#graph g.node').length,"
                             " note: document.getElementById('graph-note').textContent })")
            ok(r["n"] == 4000 and r["rows"] < 100 and r["active"] == "op-3999" and r["drawn"] and r["nodes"] == 3000
               and "3000 of 4000" in r["note"], "4000 ops: %r" % (r,))
            print("  chain4000.mlmodel: %.0f ms from the pick to the graph, %d of %d list rows drawn" % (wall * 1000, r["rows"], r["n"]))

        # bad input: the hostile inputs of the CLI's tests (tests/regress, mutated
        # fixtures), a truncated package and zips that would inflate past their word or
        # past any sense: each gives the CLI's answer (its JSON, or its one-line error and
        # exit status) or a one-line error of the page, within seconds (no hang)
        with tempfile.TemporaryDirectory() as d:
            ins = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "regress_inputs.py"), os.path.join(d, "in")],
                                 stdout=subprocess.PIPE, check=True).stdout.decode().split()
            ins = [p for p in ins if p.endswith((".mlmodel", ".mlpackage"))]
            hostile = [p for p in ins if "/regress-" in p] + [p for p in ins if "/mut-" in p][::4]
            trunc = os.path.join(d, "truncated.mlpackage")
            shutil.copytree(os.path.join(data, "converted", "gru__mlp_fp16.mlpackage"), trunc)
            for dp, _, fs in os.walk(trunc):
                if "model.mlmodel" in fs:
                    mm = os.path.join(dp, "model.mlmodel")
                    os.truncate(mm, os.path.getsize(mm) // 2)
            hostile.append(trunc)
            zips = []
            zeros = os.path.join(d, "zeros.mlpackage.zip")  # 300 MB of zeros in ~300 kB, truthfully declared
            with zipfile.ZipFile(zeros, "w", zipfile.ZIP_DEFLATED) as zf:
                with zf.open("zeros.mlpackage/Data/com.apple.CoreML/weights/weight.bin", "w", force_zip64=False) as f:
                    chunk = bytes(1 << 20)
                    for _ in range(300):
                        f.write(chunk)
            zips.append(zeros)
            liar = os.path.join(d, "liar.mlpackage.zip")  # the same, declaring 1000 bytes
            with open(zeros, "rb") as f:
                z = bytearray(f.read())
            cd = z.rfind(b"PK\x01\x02")
            z[cd + 24:cd + 28] = (1000).to_bytes(4, "little")
            with open(liar, "wb") as f:
                f.write(z)
            zips.append(liar)
            n_fixed = 0
            for path in hostile + zips:
                name = os.path.basename(path)
                browser.eval("window.anelintLast = null; true")
                kind = "dir" if os.path.isdir(path) else "file"
                browser.set_files("#pick-file" if kind == "file" else "#pick-dir", [path])
                t0 = time.time()
                try:
                    last = browser.wait_for("window.anelintLast", timeout=30)
                except TimeoutError:
                    ok(False, "hostile %s: no answer in 30 s" % name)
                    continue
                wall = time.time() - t0
                shown = browser.eval("document.getElementById('status').textContent")
                if path in zips:
                    ok(last["status"] == -1 and "\n" not in shown and ("zip bomb" in shown or "declared size" in shown),
                       "%s: the page says %r" % (name, shown))
                    print("  %s: %r in %.0f ms" % (name, shown, wall * 1000))
                    continue
                rc, want = cli_json(o.anelint, path, ["--no-config"])
                if rc in (0, 1):
                    ok(last.get("json") == want and last["status"] == rc, "hostile %s: the page's JSON differs from the CLI's" % name)
                else:
                    ok(last["status"] == rc and shown and "\n" not in shown and name in shown,
                       "hostile %s: exit %s in the page (%r), %s from the CLI" % (name, last["status"], shown, rc))
                ok(wall < 10, "hostile %s: %.1f s" % (name, wall))
                if "/regress-" not in path:
                    continue
                # fix in the page on it: the CLI's exit status, messages and output bytes
                t0 = time.time()
                got = browser.eval("document.getElementById('allow').value = ''; document.getElementById('proof').value = '';"
                                   " anelintFix()", timeout=60)
                wall = time.time() - t0
                with tempfile.TemporaryDirectory() as work:
                    rc, out, err, cli_out = cli_fix(o.anelint, path, [], work)
                    same = got["status"] == rc and got["stdout"] == out and got["stderr"] == err
                    if same and rc == 0:
                        data64 = page_fixed_base64(browser)
                        same = fixed_tree(base64.b64decode(data64), got["name"] or "", cli_out, ok) == tree_bytes(cli_out)
                    ok(same, "hostile %s: fix in the page (exit %s) %r, the CLI's (exit %s) %r"
                       % (name, got["status"], (got["stderr"] + got["stdout"])[:200], rc, (err + out)[:200]))
                    ok(wall < 10, "hostile %s: fix took %.1f s" % (name, wall))
                    n_fixed += 1
            print("  %d hostile inputs and %d zips: each answered as by the CLI or refused in one line;"
                  " fix of %d of them as by the CLI" % (len(hostile), len(zips), n_fixed))

        # a run stopped midway (what the page does after RUN_LIMIT_MS, or when the module
        # traps): the run waiting gets an error, and a new worker answers the next
        r = browser.eval("(async () => { const p = call(['check', '-f', 'json', '--no-config', page.root], page.files);"
                         " stopWorker('stopped by the test'); const r = await p;"
                         " const again = await call(['targets', '-f', 'json'], []);"
                         " return [r.status, r.stderr, again.status]; })()")
        ok(r[0] == -1 and "stopped by the test" in r[1] and r[2] == 0, "a stopped run: %r" % (r,))

        browser.pump(0.2)
        bad_requests = [u for u in browser.requests() if not u.startswith(("file:", "blob:", "data:", "about:"))]
        ok(not bad_requests, "network requests: %s" % bad_requests[:5])
        ok(any(u.endswith("anelint-bundle.js") for u in browser.requests()),
           "the request log saw the page's own files (so it would see others)")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
