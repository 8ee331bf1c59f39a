# SPDX-License-Identifier: MIT
"""pytest for the anelint Python package, against the CLI built beside it: the same
model gives the same verdicts, outputs and rewritten bytes through both.
Run from the repository root: ANELINT=build/anelint python3 -m pytest python/tests
(`make check-python`)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import anelint  # noqa: E402

CLI = os.environ.get("ANELINT", os.path.join(ROOT, "build", "anelint"))
DATA = os.path.join(ROOT, "tests", "data", "converted")
POOL = os.path.join(DATA, "pool_k15_s3__nn_ios13.mlmodel")  # 3 layers, x: fp32 [1, 8, 64, 64]
POOL_PKG = os.path.join(DATA, "pool_k15_s3__mlp_fp16.mlpackage")
UPSAMPLE = os.path.join(DATA, "upsample_x4_nearest__nn_ios13.mlmodel")  # fix: upsample-x2-chain


def cli_json(*args):
    r = subprocess.run([CLI, *args, "--format", "json"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_version_is_the_clis():
    out = subprocess.run([CLI, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.split()[1] == anelint.version() == anelint.__version__
    assert cli_json("check", "--fail-on", "never", POOL)["anelint"] == anelint.version()


@pytest.mark.parametrize("target,os_release", [(None, None), ("a17", "ios17"), ("a12", "ios15")])
def test_check_matches_the_cli(target, os_release):
    args = (["--target", target] if target else []) + (["--os", os_release] if os_release else [])
    want = cli_json("check", *args, POOL)["models"][0]
    got = anelint.check(POOL, target=target, os=os_release)
    assert isinstance(got.model, anelint.Model) and got.model.type == "neuralNetwork"
    assert len(got.layers) == len(want["layers"]) == 3
    for layer, w in zip(got.layers, want["layers"]):
        assert isinstance(layer, anelint.Layer)
        assert (layer.name, layer.type, layer.ane, layer.unit, layer.rules, layer.reason) == \
            (w["name"], w["type"], w["ane"], w["unit"], w["rules"], w.get("reason"))
    a = got.layers[0]
    assert a.rules == ["ANE008", "ANE009"] and not a.ane and a.unit == "cpu"
    assert "kernel 15x15" in a.reason
    # issue #30: three verdicts; the concat the work floor moves is uncertain on iOS 27 (the
    # floor's reports are iOS 18 and 26): ane None, the unit still the best guess
    assert [(x.verdict, x.p_ane) for x in got.layers] == [(w["verdict"], w["p_ane"]) for w in want["layers"]]
    assert a.verdict == "not_ane" and a.p_ane < 0.3
    if os_release in (None, "ios27"):
        c = got.layers[2]
        assert c.verdict == "uncertain" and c.ane is None and c.unit == "cpu" and c.p_ane == 0.5
    assert [f.rule for f in got.model.findings] == [f["rule"] for f in want["findings"]]


def test_check_takes_bytes_a_spec_and_an_mlmodel():
    by_path = anelint.check(POOL)
    data = open(POOL, "rb").read()

    class Spec:  # what coremltools' Model_pb2.Model offers
        def SerializeToString(self):
            return data

    class NeuralNetworkMLModel:  # ct.models.MLModel of a NeuralNetwork: get_spec()
        package_path = None

        def get_spec(self):
            return Spec()

    class MLProgramMLModel:  # ct.models.MLModel of an ML Program: its package on disk
        package_path = POOL_PKG

        def get_spec(self):
            raise AssertionError("an ML Program is read from its package, weights and all")

    for model in (data, bytearray(data), memoryview(data), Spec(), NeuralNetworkMLModel()):
        got = anelint.check(model)
        assert [(x.name, x.unit, x.rules) for x in got.layers] == \
            [(x.name, x.unit, x.rules) for x in by_path.layers]
    pkg = anelint.check(MLProgramMLModel())
    assert pkg.model.type == "mlProgram"
    assert [x.rules for x in pkg.layers] == [x.rules for x in anelint.check(POOL_PKG).layers]
    with pytest.raises(TypeError):
        anelint.check(42)


def test_errors_carry_the_diagnostic():
    with pytest.raises(anelint.AnelintError) as e:
        anelint.check(b"\xff\xff\xff garbage")
    d = e.value.diagnostics[0]
    assert d.severity == "error" and d.offset == 0 and "not a Core ML model" in d.message
    assert e.value.status == anelint.AnelintError("x", []).status or e.value.status  # a status name
    with pytest.raises(anelint.AnelintError) as e:
        anelint.check(os.path.join(DATA, "no_such.mlmodel"))
    assert "no_such.mlmodel" in str(e.value) and e.value.diagnostics
    with pytest.raises(ValueError):
        anelint.check(POOL, target="z99")
    with pytest.raises(ValueError):
        anelint.check(POOL, os="ios3")


def test_plan_matches_the_cli():
    want = cli_json("plan", "--fail-on", "never", POOL)["models"][0]
    got = anelint.plan(POOL)
    assert got.command == "plan"
    assert got.model.raw["segments"] == want["segments"]
    assert [x.unit for x in got.layers] == [w["unit"] for w in want["layers"]]
    assert got.model.summary["layers"] == 3


def test_run_round_trip_against_the_clis_npy(tmp_path):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((1, 8, 64, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    subprocess.run([CLI, "run", POOL, "--input", f"x={tmp_path / 'x.npy'}", "--out", str(out)],
                   check=True, capture_output=True)
    got = anelint.run(POOL, {"x": x})
    assert list(got) == ["var_31"]
    want = np.load(out / "var_31.npy")
    assert got["var_31"].shape == want.shape == (1, 16, 17, 17)
    np.testing.assert_array_equal(got["var_31"], want.astype(np.float32))
    # the pooling outputs really are max and average pools of x (not zeros)
    assert got["var_31"][0, :8, 0, 0].tolist() == pytest.approx(x[0, :, :15, :15].max(axis=(1, 2)).tolist())
    half = anelint.run(POOL, {"x": x}, precision="fp16")["var_31"]
    assert np.abs(half - want).max() < 1e-2 * np.abs(want).max()
    with pytest.raises(anelint.AnelintError):
        anelint.run(POOL, {})  # the input is missing


def test_verify(tmp_path):
    same = anelint.verify(POOL, POOL, allow="exact")
    assert same and same.proved and same.ok and same.diffs[0].identical
    x = np.ones((1, 8, 64, 64), np.float32)
    assert anelint.verify(POOL, open(POOL, "rb").read(), inputs={"x": x})
    # the same network as an ML Program with fp16 weights: close, not identical
    nn = os.path.join(DATA, "dilated_conv__nn_ios13.mlmodel")
    fp16 = os.path.join(DATA, "dilated_conv__mlp_ios17_fp16.mlpackage")
    other = anelint.verify(nn, fp16, allow="exact")
    assert other.proved and not other.ok and not other
    assert not other.diffs[0].identical and 0 < other.diffs[0].rel < 1e-2
    assert anelint.verify(nn, fp16, allow="approximate")  # reported, not failed


def test_fix_writes_what_the_cli_writes(tmp_path):
    plan_only = anelint.fix(UPSAMPLE)
    assert plan_only.output is None and plan_only.applied == 1
    r = anelint.fix(UPSAMPLE, out=tmp_path / "fixed.mlmodel")
    assert isinstance(r, anelint.FixResult) and r.applied == 1 and r.proof
    applied = [w for w in r.rewrites if w.applied]
    assert applied[0].rule == "ANE010" and applied[0].pass_name == "upsample-x2-chain"
    subprocess.run([CLI, "fix", UPSAMPLE, "-o", str(tmp_path / "cli.mlmodel")], check=True, capture_output=True)
    assert (tmp_path / "fixed.mlmodel").read_bytes() == (tmp_path / "cli.mlmodel").read_bytes()
    skipped = anelint.fix(UPSAMPLE, skip=[applied[0].layer])
    assert skipped.applied == 0


def test_fix_out_never_replaces_the_input(tmp_path):
    """out= naming the input (by path or a hard link) or a file inside an input package
    raises AnelintError from the library's output guard; the input keeps its bytes."""
    src = tmp_path / "m.mlmodel"
    src.write_bytes(open(UPSAMPLE, "rb").read())
    os.link(src, tmp_path / "hard.mlmodel")
    before = src.read_bytes()
    for out in (src, str(src), tmp_path / "hard.mlmodel"):
        with pytest.raises(anelint.AnelintError) as e:
            anelint.fix(src, out=out)
        assert "the output is the input" in str(e.value.diagnostics[0])
        assert src.read_bytes() == before
    pkg = tmp_path / "p.mlpackage"
    subprocess.run(["cp", "-R", POOL_PKG, str(pkg)], check=True)
    manifest = (pkg / "Manifest.json").read_bytes()
    with pytest.raises(anelint.AnelintError):
        anelint.fix(pkg, out=pkg / "Data" / "fixed.mlpackage")
    assert (pkg / "Manifest.json").read_bytes() == manifest and not (pkg / "Data" / "fixed.mlpackage").exists()
def test_fix_with_nothing_to_rewrite_writes_the_clis_copy(tmp_path):
    # issue #29: the README's `fix(path, out=...)` then `verify(path, out)` must work when
    # no rewrite applies: out is a byte-identical copy of the input, as the CLI writes it
    nn = os.path.join(DATA, "dilated_conv__nn_ios13.mlmodel")
    r = anelint.fix(nn, out=tmp_path / "fixed.mlmodel")
    assert r.applied == 0 and r.output == str(tmp_path / "fixed.mlmodel") and r.proof is None
    assert (tmp_path / "fixed.mlmodel").read_bytes() == open(nn, "rb").read()
    assert anelint.verify(nn, tmp_path / "fixed.mlmodel", allow="exact")
    subprocess.run([CLI, "fix", nn, "-o", str(tmp_path / "cli.mlmodel")], check=True, capture_output=True)
    assert (tmp_path / "fixed.mlmodel").read_bytes() == (tmp_path / "cli.mlmodel").read_bytes()
    assert "copy of the input" in str(r)
    pkg = anelint.fix(POOL_PKG, out=tmp_path / "fixed.mlpackage")  # a package: copied whole
    assert pkg.applied == 0 and sorted(os.listdir(tmp_path / "fixed.mlpackage")) == sorted(os.listdir(POOL_PKG))
    assert anelint.verify(POOL_PKG, tmp_path / "fixed.mlpackage", allow="exact")


def _tree(path):
    """{relative path: bytes} of every file under path."""
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            out[os.path.relpath(os.path.join(d, f), path)] = open(os.path.join(d, f), "rb").read()
    return out


def test_fix_runs_rounds_as_the_cli(tmp_path):
    # issue #31: an fp32 ML Program takes two rounds (mil-fp16-compute, then the per-op
    # passes on its output): fix() writes the bytes `anelint fix` writes in one run
    src = os.path.join(DATA, "cumsum__mlp_fp32.mlpackage")
    r = anelint.fix(src, out=tmp_path / "py.mlpackage", allow="approximate")
    subprocess.run([CLI, "fix", "--allow", "approximate", src, "-o", str(tmp_path / "cli.mlpackage")],
                   check=True, capture_output=True)
    assert r.proof and sorted({w.round for w in r.rewrites if w.applied}) == [1, 2]
    assert r.applied == sum(w.applied for w in r.rewrites) == 5
    assert _tree(tmp_path / "py.mlpackage") == _tree(tmp_path / "cli.mlpackage")
    # max_rounds=1 as --max-rounds 1; allow accumulates (the highest class of a list)
    one = anelint.fix(src, out=tmp_path / "one.mlpackage", allow=["approximate", "reassociate"], max_rounds=1)
    subprocess.run([CLI, "fix", "--allow", "approximate", "--allow", "reassociate", "--max-rounds", "1", src,
                    "-o", str(tmp_path / "cli1.mlpackage")], check=True, capture_output=True)
    assert one.applied == 1 and _tree(tmp_path / "one.mlpackage") == _tree(tmp_path / "cli1.mlpackage")
    with pytest.raises(ValueError):
        anelint.fix(src, allow="approximate,bogus")
    # an approximate rewrite whose outputs collapse to zeros / overflow in fp16 is refused
    crafted = os.path.join(ROOT, "tests", "data", "crafted", "fix_io_range.mlmodel")
    with pytest.raises(anelint.AnelintError):
        anelint.fix(crafted, out=tmp_path / "r.mlmodel", allow="approximate", tolerance=10)
    assert not (tmp_path / "r.mlmodel").exists()
    with pytest.raises(anelint.AnelintError):  # rel ~2.4e-4 beyond 1e-4
        anelint.fix(POOL, out=tmp_path / "p.mlmodel", allow="reassociate,approximate", tolerance=1e-4)
    assert anelint.fix(POOL, out=tmp_path / "p.mlmodel", allow="approximate", tolerance=1e-3).proof
    assert [p for p in os.listdir(tmp_path) if "anelint" in p] == []
    # beside an exact rewrite, a refused approximate one: the round again without it, as the CLI
    gap = os.path.join(ROOT, "tests", "data", "crafted", "fix_io_gap.mlmodel")
    r = anelint.fix(gap, out=tmp_path / "g.mlmodel", allow="approximate")
    assert r.proof and r.applied == 1 and "collapsed" in r.approximate_refused
    assert [w.pass_name for w in r.rewrites if w.applied] == ["global-avgpool-valid-to-same"]
    subprocess.run([CLI, "fix", "--allow", "approximate", gap, "-o", str(tmp_path / "g_cli.mlmodel")],
                   check=True, stdout=subprocess.DEVNULL)
    assert (tmp_path / "g.mlmodel").read_bytes() == (tmp_path / "g_cli.mlmodel").read_bytes()


def test_plan_gives_typed_segments():
    want = cli_json("plan", "--fail-on", "never", "--policy", "optimistic",
                    os.path.join(DATA, "builder__custom_layer.mlmodel"))["models"][0]
    got = anelint.plan(os.path.join(DATA, "builder__custom_layer.mlmodel"), policy="optimistic")
    assert all(isinstance(s, anelint.Segment) for s in got.segments)
    assert [(s.index, s.unit, s.first, s.last, s.layers, s.flops) for s in got.segments] == \
        [(w["index"], w["unit"], w["first"], w["last"], w["layers"], w["flops"]) for w in want["segments"]] == \
        [(0, "cpu", 0, 1, 2, 149504), (1, "ane", 2, 2, 1, 0)]
    sw = got.model.switches
    assert [(x.from_segment, x.to_segment, x.from_unit, x.to_unit, x.cost_us) for x in sw] == [(0, 1, "cpu", "ane", 720.0)]
    fx = got.model.fixes[0]
    assert isinstance(fx, anelint.PlanFix) and fx.rule == "ANE001" and fx.layers == ["custom_swish"]
    assert (fx.segments_before, fx.segments_after) == (2, 1)
    assert [x.segment for x in got.layers] == [w["segment"] for w in want["layers"]] == [0, 0, 1]
    assert anelint.check(POOL).segments == []  # check has no plan


def test_a_report_prints_a_summary_not_every_layer():
    big = os.path.join(DATA, "transformer_encoder__nn_ios13.mlmodel")
    report = anelint.check(big)
    assert len(report.layers) > 20
    text, rep = str(report), repr(report)
    assert text.count("\n") == len(report.models)  # a heading, then one line per model
    assert len(rep) < 300 and "Layer(" not in rep and "Layer(" not in text
    n_ane = sum(x.unit == "ane" for x in report.layers)
    assert f"{len(report.layers)} layers, {n_ane} on the ANE" in text
    assert "1 segment, 0 switches" in str(anelint.plan(big).model)


def test_an_op_names_the_weights_it_reads():
    # issue #29 item 7: ML Program ops name the weight constant (after the PyTorch parameter)
    pkg = os.path.join(DATA, "dilated_conv__mlp_ios17_fp16.mlpackage")
    got = {x.name: x.weights for x in anelint.check(pkg).layers}
    assert got["input_1_cast_fp16"] == "c1_weight_to_fp16" and got["input_5_cast_fp16"] == "c2_weight_to_fp16"
    assert got["input_3_cast_fp16"] is None  # a relu reads no weights
    assert all(x.weights is None for x in anelint.check(POOL).layers)  # NeuralNetwork: unnamed


def test_fix_drops_a_rewrite_that_would_still_fall_back_as_the_cli_does(tmp_path):
    # the max pooling cascade of POOL leaves its stride 3 (ANE009): the CLI drops it and
    # writes a copy; so does fix() (it used to write the cascade)
    r = anelint.fix(POOL, out=tmp_path / "fixed.mlmodel")
    assert r.applied == 0 and r.proof is None
    mp = [w for w in r.rewrites if w.pass_name == "maxpool-cascade"]
    assert mp and not mp[0].applied and "would still fall back: ANE009" in mp[0].why_not
    subprocess.run([CLI, "fix", POOL, "-o", str(tmp_path / "cli.mlmodel")], check=True, capture_output=True)
    assert (tmp_path / "fixed.mlmodel").read_bytes() == (tmp_path / "cli.mlmodel").read_bytes() == open(POOL, "rb").read()
    assert anelint.fix(POOL).applied == 0


@pytest.mark.parametrize("src,allow,extra", [
    (os.path.join(DATA, "cumsum__mlp_fp32.mlpackage"), "approximate", {}),  # two rounds
    (os.path.join(ROOT, "tests", "data", "crafted", "fix_io_gap.mlmodel"), "approximate", {}),  # a refused approximate
    (UPSAMPLE, "exact", {"target": "a17", "os": "ios17", "proof": "region", "seed": 7}),
    (POOL, "exact", {}),  # a rewrite dropped (it would still fall back): nothing applied
    (os.path.join(ROOT, "tests", "data", "crafted", "fix_shape.mlmodel"), "exact", {"shapes": {"x": "default"}}),
    (os.path.join(ROOT, "tests", "data", "crafted", "fix_shape.mlmodel"), "exact",
     {"shapes": {"x": [(1, 16, 256, 256), (1, 16, 64, 128)]}}),
])
def test_fix_json_is_the_clis_byte_for_byte(tmp_path, src, allow, extra):
    # issue #32: fix is one library call (al_model_fix) for both front ends; the JSON is its one writer
    args = [CLI, "fix", "--format", "json", "--threads", "1", "--allow", allow, src]
    for k in ("target", "os", "proof", "seed"):
        if k in extra:
            args += [f"--{k}", str(extra[k])]
    for name, v in extra.get("shapes", {}).items():
        if isinstance(v, list):
            args += ["--enumerate", f"{name}=" + ";".join(",".join(map(str, x)) for x in v)]
        else:
            args += ["--shape", f"{name}=" + (v if isinstance(v, str) else ",".join(map(str, v)))]
    dry = subprocess.run(args + ["--dry-run"], capture_output=True, text=True, check=True).stdout
    assert anelint.fix(src, allow=allow, threads=1, **extra).json == dry
    out = tmp_path / ("fixed.mlpackage" if src.endswith(".mlpackage") else "fixed.mlmodel")
    cli = subprocess.run(args + ["-o", str(out)], capture_output=True, text=True, check=True).stdout
    written = _tree(out) if out.is_dir() else out.read_bytes()
    subprocess.run(["rm", "-rf", str(out)], check=True)
    r = anelint.fix(src, out=out, allow=allow, threads=1, **extra)
    assert r.json == cli and json.loads(cli)["written"] and r.output == str(out)
    assert (_tree(out) if out.is_dir() else out.read_bytes()) == written
@pytest.mark.parametrize("target,os_release", [(None, None), ("a12", "ios15")])
def test_baseline_is_the_clis_byte_for_byte(tmp_path, target, os_release):
    """anelint.baseline and `anelint check --write-baseline` are one library call
    (al_ci_baseline_*): the same models and options give the same bytes."""
    out = tmp_path / "sub" / "baseline.json"
    out.parent.mkdir()
    args = (["--target", target] if target else []) + (["--os", os_release] if os_release else [])
    r = subprocess.run([CLI, "check", "--no-config", *args, "--write-baseline", str(out), POOL, UPSAMPLE],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    got = anelint.baseline([POOL, UPSAMPLE], str(out), target=target, os=os_release)
    assert got.encode() == out.read_bytes()
    doc = json.loads(got)
    assert doc["anelint_baseline"] == 1 and doc["findings"]
    assert {"model", "layer", "rule"} <= set(doc["findings"][0])
def test_verify_and_run_give_the_clis_json(tmp_path):
    """The CLI and the package call the same library functions (al_verify, al_run_model)
    and the library writes the document: the same bytes (run: but for its timing)."""
    nn = os.path.join(DATA, "dilated_conv__nn_ios13.mlmodel")
    fp16 = os.path.join(DATA, "dilated_conv__mlp_ios17_fp16.mlpackage")
    for tol, seed in ((1e-4, 1), (1e-2, 7)):
        cli = subprocess.run([CLI, "verify", nn, fp16, "--format", "json", "--tol", str(tol), "--seed", str(seed)],
                             capture_output=True, text=True)
        assert cli.returncode == (1 if tol < 1e-3 else 0), cli.stderr
        got = anelint.verify(nn, fp16, format="json", tol=tol, seed=seed)
        assert got == cli.stdout
        assert json.loads(got)["pass"] == (tol > 1e-3)
    x = np.ones((1, 8, 64, 64), np.float32)
    np.save(tmp_path / "x.npy", x)
    cli = subprocess.run([CLI, "run", POOL, "--input", f"x={tmp_path / 'x.npy'}", "--format", "json",
                          "--threads", "1"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    got = anelint.run(POOL, files=[f"x={tmp_path / 'x.npy'}"], format="json")

    def timeless(doc):
        return "\n".join(line for line in doc.splitlines() if '"ms":' not in line and '"threads":' not in line)
    assert timeless(got) == timeless(cli.stdout) and '"summary": "min' in got
    with pytest.raises(anelint.AnelintError, match="no value for input 'x'"):
        anelint.run(POOL, format="json")
def test_cli_and_python_give_the_same_document():
    """check and plan are one library call (al_models_run) for the CLI and for Python: the same
    model and options give the same JSON, byte for byte."""
    cases = [("check", POOL, {}, []),
             ("check", POOL_PKG, {"target": "a17", "os": "ios17"}, ["--target", "a17", "--os", "ios17"]),
             ("plan", os.path.join(DATA, "builder__custom_layer.mlmodel"), {"policy": "optimistic"},
              ["--policy", "optimistic"]),
             ("plan", POOL_PKG, {"target": "m1"}, ["--target", "m1"])]
    for command, path, kw, args in cases:
        cli = subprocess.run([CLI, command, "--format", "json", "--no-config", "--fail-on", "never"] + args + [path],
                             capture_output=True, check=True).stdout.decode()
        py = getattr(anelint, command)(path, **kw).text
        assert py == cli, (command, path, kw)


def test_compare_is_the_clis_byte_for_byte():
    """compare is one library call (al_compare) for the CLI and for Python: the same model,
    evidence and options give the same document, JSON and text, byte for byte."""
    crafted = os.path.join(ROOT, "tests", "data", "crafted", "mil_rules.mlpackage")
    ev = os.path.join(ROOT, "tests", "data", "evidence")
    cases = [([os.path.join(ev, "mil_rules.evidence.json")], {}, []),
             ([os.path.join(ev, "mil_rules.mlperf"), os.path.join(ev, "mil_rules.inspect.txt")],
              {"target": "a14", "os": "ios17", "compute_units": "cpu-and-ne"},
              ["--target", "a14", "--os", "ios17", "--compute-units", "cpu-and-ne"]),
             ([os.path.join(ev, "mil_rules.table.txt")], {"evidence_format": "plan"}, ["--evidence-format", "plan"])]
    for files, kw, args in cases:
        for fmt in ("json", "text"):
            cli = subprocess.run([CLI, "compare", crafted, *files, "--format", fmt, *args], capture_output=True)
            assert cli.returncode == 0, cli.stderr
            assert anelint.compare(crafted, files, format=fmt, **kw) == cli.stdout.decode(), (files, kw, fmt)
    doc = anelint.compare(crafted, os.path.join(ev, "mil_rules.evidence.json"))
    assert doc["schema"] == "anelint-compare" and doc["matched"] == 5 and doc["agreed"] == 3
    with pytest.raises(anelint.AnelintError, match="does-not-exist"):
        anelint.compare(crafted, os.path.join(ev, "does-not-exist.json"))
