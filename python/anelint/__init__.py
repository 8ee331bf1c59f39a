# SPDX-License-Identifier: MIT
"""anelint for Python: will my Core ML model run on the Apple Neural Engine?

    import coremltools as ct, anelint
    mlmodel = ct.convert(traced, inputs=[ct.TensorType(shape=(1, 3, 224, 224))])
    report = anelint.check(mlmodel, target="a17", os="ios18")
    for layer in report.layers:
        if not layer.ane:
            print(layer.name, layer.type, layer.unit, layer.rules, layer.reason)

check / plan / compare / run / verify / fix call libanelint (the C library) through ctypes
(_native.py says why). A model is a path (.mlmodel file or .mlpackage
directory), the bytes of a .mlmodel, a coremltools MLModel or a Model spec
(duck-typed: coremltools is never imported). Errors raise AnelintError, which
carries the library's diagnostics (file, byte offset, field path, layer)."""
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _native as _n

__all__ = ["check", "plan", "baseline", "compare", "run", "verify", "fix", "version", "AnelintError", "Diagnostic", "Report",
           "Model", "Layer", "Finding", "Segment", "Switch", "PlanFix", "Proof", "FixResult", "Rewrite"]

_lib = _n.load()
_libc = _n.libc()
__version__ = _lib.al_version().decode()


def version() -> str:
    """The version of the C library loaded (the CLI's `anelint --version`)."""
    return _lib.al_version().decode()


def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


@dataclass
class Diagnostic:
    severity: str  # "note", "warning", "error"
    file: Optional[str]
    offset: Optional[int]  # byte offset in file
    where: Optional[str]  # field path
    node: Optional[str]  # layer / op
    message: str

    def __str__(self):
        loc = self.file or ""
        if self.offset is not None:
            loc += f"@{self.offset}"
        parts = [p for p in (loc, self.where, self.node and f"layer '{self.node}'") if p]
        return (": ".join(parts) + ": " if parts else "") + self.message


class AnelintError(Exception):
    """A call failed; .status is the library's status name, .diagnostics what it said."""

    def __init__(self, status: str, diagnostics: List[Diagnostic], what: str = ""):
        self.status = status
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
        if errors:
            msg = str(errors[0]) if errors[0].file else f"{what}: {errors[0]}" if what else str(errors[0])
        else:
            msg = f"{what}: {status}" if what else status
        super().__init__(msg)


class _Diags:
    def __init__(self):
        self.p = _lib.al_diags_new()
        if not self.p:
            raise MemoryError

    def list(self):
        out = []
        for i in range(_lib.al_diags_count(self.p)):
            d = _lib.al_diags_get(self.p, i).contents
            out.append(Diagnostic(("note", "warning", "error")[d.severity], _s(d.file),
                                  None if d.offset == 2**64 - 1 else d.offset, _s(d.where), _s(d.node),
                                  _s(d.msg) or ""))
        return out

    def fail(self, st, what=""):
        if st != 0:
            raise AnelintError(_lib.al_status_str(st).decode(), self.list(), what)

    def __del__(self):
        if getattr(self, "p", None):
            _lib.al_diags_free(self.p)
            self.p = None


class _Open:
    """An open al_model (and the buffers it borrows), freed on close."""

    def __init__(self, model, name=None):
        self.diags = _Diags()
        self.keep = None
        p = _n.c_void_p()
        path = _model_path(model)
        if path is not None:
            self.name = name or os.fspath(path)
            st = _lib.al_model_open(os.fsencode(path), _n.ctypes.byref(p), self.diags.p)
        else:
            data = bytes(_model_bytes(model))
            self.keep = _n.ctypes.create_string_buffer(data, len(data))
            self.name = name or "<bytes>"
            st = _lib.al_model_open_buffer(self.keep, len(data), None, 0, self.name.encode(),
                                           _n.ctypes.byref(p), self.diags.p)
        self.diags.fail(st, self.name)
        self.p = p.value

    def close(self):
        if self.p:
            _lib.al_model_free(self.p)
            self.p = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _model_path(model):
    if isinstance(model, (str, os.PathLike)):
        return model
    # coremltools MLModel: an ML Program keeps its weights in a package on disk
    pkg = getattr(model, "package_path", None)
    if isinstance(pkg, (str, os.PathLike)) and os.path.isdir(pkg):
        return pkg
    return None


def _model_bytes(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return model
    if hasattr(model, "get_spec"):  # coremltools MLModel (NeuralNetwork)
        model = model.get_spec()
    if hasattr(model, "SerializeToString"):  # a Model_pb2.Model spec
        return model.SerializeToString()
    raise TypeError("anelint: a model is a path, bytes, a coremltools MLModel or a Model spec, not "
                    f"{type(model).__name__}")


# ------------------------------------------------------------------ check and plan

@dataclass
class Finding:
    rule: str
    kind: str  # "illegal", "cost", "warn"
    unit: Optional[str]
    confidence: str  # A documented by Apple, M measured, G a guess
    reason: str


@dataclass
class Layer:
    index: int
    name: str
    type: str
    ane: Optional[bool]  # placed on the ANE (the final placement, as `plan` predicts it); None: uncertain
    unit: str  # "ane", "gpu", "cpu": the final placement
    op_ane: bool  # eligible by its own rules
    op_unit: str
    moved_by: Optional[str]  # the rule that moved it off its own verdict
    confidence: Optional[str]
    rules: List[str]  # ids of the rules that fired
    reason: Optional[str]  # their reasons, "; "-joined
    findings: List[Finding]
    function: Optional[str] = None
    block: Optional[str] = None
    depth: int = 0
    segment: Optional[int] = None  # plan: the index of the segment it is placed in
    weights: Optional[str] = None  # ML Program: the weight constant it reads, named after the PyTorch parameter
    verdict: Optional[str] = None  # "ane", "not_ane" or "uncertain" (schema 3)
    p_ane: Optional[float] = None  # probability that Core ML runs it on the ANE


@dataclass
class Segment:
    """A run of layers `plan` predicts on one unit (docs/partition.md)."""
    index: int
    unit: str  # "ane", "gpu", "cpu"
    first: int  # index of its first and last layer
    last: int
    layers: int
    flops: float
    share: float  # of the model's FLOPs
    est_us: Optional[float]  # roofline estimate, microseconds


@dataclass
class Switch:
    """A switch between two segments and its estimated cost."""
    from_segment: int
    to_segment: int
    from_unit: str
    to_unit: str
    cost_us: float


@dataclass
class PlanFix:
    """One of plan's cheapest fixes: rewrite these layers and the segments merge."""
    rank: int
    rule: Optional[str]
    layers: List[str]  # layer names
    segments_before: int
    segments_after: int
    switches_before: int
    switches_after: int
    gain_us: float


@dataclass(repr=False)
class Model:
    path: str
    type: str
    spec_version: Optional[int]
    min_os: Optional[str]
    layers: List[Layer]
    findings: List[Finding]  # model-level rules
    summary: Dict[str, Any]  # check: "summary"; plan: "totals"
    raw: Dict[str, Any] = field(default_factory=dict)  # this model's JSON object
    segments: List[Segment] = field(default_factory=list)  # plan only
    switches: List[Switch] = field(default_factory=list)  # plan only
    fixes: List[PlanFix] = field(default_factory=list)  # plan only

    def __str__(self):
        """One line: the model, its layers and how many are placed on the ANE."""
        n = len(self.layers)
        on = sum(layer.unit == "ane" for layer in self.layers)
        units: Dict[str, int] = {}
        for layer in self.layers:
            if layer.unit != "ane":
                units[layer.unit] = units.get(layer.unit, 0) + 1
        off = ", ".join(f"{u} {k}" for u, k in sorted(units.items()))
        text = f"{self.path}  {self.type}, spec {self.spec_version}: {n} layers, {on} on the ANE"
        text += f" ({on / n:.0%})" if n else ""
        text += f", {n - on} fall back: {off}" if off else ""
        if self.segments:
            ns, nw = len(self.segments), len(self.switches)
            text += f"; {ns} segment{'s' if ns != 1 else ''}, {nw} switch{'es' if nw != 1 else ''}"
        return text

    def __repr__(self):
        return f"<anelint.Model {self}>"


@dataclass(repr=False)
class Report:
    """What `anelint check|plan --format json` says (docs/json-schema.md), typed.
    print(report) gives a few lines (per model: layers, ANE share, fallbacks), not every layer."""
    command: str
    models: List[Model]  # the root, then each pipeline stage
    raw: Dict[str, Any] = field(default_factory=dict)
    text: str = ""  # the JSON document as the CLI prints it

    @property
    def model(self) -> Model:
        return self.models[0]

    @property
    def layers(self) -> List[Layer]:
        return [layer for m in self.models for layer in m.layers]

    @property
    def segments(self) -> List[Segment]:
        """plan: the segments of every model (the root, then each pipeline stage)."""
        return [s for m in self.models for s in m.segments]

    @property
    def ane_share(self) -> float:
        n = len(self.layers)
        return sum(layer.unit == "ane" for layer in self.layers) / n if n else 0.0

    def __str__(self):
        return "\n".join([f"anelint {self.command}:"] + [f"  {m}" for m in self.models])

    def __repr__(self):
        return f"<anelint.Report {self.command}: " + "; ".join(str(m) for m in self.models) + ">"


def _finding(f):
    return Finding(f.get("rule"), f.get("kind"), f.get("unit"), f.get("confidence"), f.get("reason"))


def _layer(j):
    if "ane" not in j:  # a plan's layer: its unit and why it is placed there
        unit = j.get("unit")
        return Layer(j["index"], j["name"], j["type"], unit == "ane", unit, j.get("verdict") == "ane",
                     j.get("verdict"), None, None, [], j.get("placed"), [], j.get("function"), j.get("block"),
                     j.get("depth", 0), j.get("segment"), j.get("weights"))
    return Layer(j["index"], j["name"], j["type"], j["ane"], j["unit"], j.get("op_ane", j["ane"]),
                 j.get("op_unit", j["unit"]), j.get("moved_by"), j.get("confidence"), list(j.get("rules", [])),
                 j.get("reason"), [_finding(f) for f in j.get("findings", [])], j.get("function"),
                 j.get("block"), j.get("depth", 0), None, j.get("weights"), j.get("verdict"), j.get("p_ane"))


def _segment(j):
    return Segment(j["index"], j["unit"], j["first"], j["last"], j["layers"], j.get("flops", 0), j.get("share", 0.0),
                   j.get("est_us"))


def _switch(j):
    return Switch(j["from"], j["to"], j["from_unit"], j["to_unit"], j.get("cost_us", 0.0))


def _plan_fix(j):
    return PlanFix(j.get("rank", 0), j.get("rule"), [x.get("name") for x in j.get("layers", [])],
                   j.get("segments_before", 0), j.get("segments_after", 0), j.get("switches_before", 0),
                   j.get("switches_after", 0), j.get("gain_us", 0.0))


def _model(j):
    return Model(j.get("path"), j.get("type"), j.get("spec_version"), j.get("min_os"),
                 [_layer(x) for x in j.get("layers", [])], [_finding(f) for f in j.get("findings", [])],
                 j.get("summary") or j.get("totals") or {}, j, [_segment(x) for x in j.get("segments") or []],
                 [_switch(x) for x in j.get("switches") or []], [_plan_fix(x) for x in j.get("fixes") or []])


def _check_opts(target, os_release):
    """struct al_check_opts for one target and release, parsed as the CLI parses them (al_where_parse)."""
    where = _n.WhereSpec()
    d = _Diags()
    if _lib.al_where_parse(_enc(target), _enc(os_release), None, _n.AL_WHERE_ONE, _n.ctypes.byref(where), d.p):
        raise ValueError(f"anelint: {d.list()[0].message} (see `anelint targets`)")
    check_opts = _n.CheckOpts()
    check_opts.where = where.where
    return check_opts


def _enc(s):
    return None if s is None else str(s).encode()


def _report(model, command, target, os_release, policy=None):
    """`anelint check|plan --format json` on one model: al_models_run, the call the CLI makes."""
    where = _n.WhereSpec()
    d = _Diags()
    if _lib.al_where_parse(_enc(target), _enc(os_release), None, _n.AL_WHERE_ONE, _n.ctypes.byref(where), d.p):
        raise ValueError(f"anelint: {d.list()[0].message} (see `anelint targets`)")
    names = ["auto", "nn2020", "mlprogram", "optimistic"]
    if policy is not None and policy not in names:
        raise ValueError(f"anelint: policy is one of {', '.join(names)}, not '{policy}'")
    with _Open(model) as m:
        f = _libc.tmpfile()
        if not f:
            raise OSError("anelint: tmpfile() failed")
        try:
            run = _n.ModelsRun(cmd=_n.AL_SINK_PLAN if command == "plan" else _n.AL_SINK_CHECK,
                               sink=_n.ctypes.cast(_lib.al_sink_by_name(b"json"), _n.c_void_p),
                               paths=(_n.c_char_p * 1)(m.name.encode()), n_paths=1,
                               models=(_n.c_void_p * 1)(m.p), where=where, out=f, diags=m.diags.p)
            run.plan.policy = names.index(policy) if policy else 0
            run.report.fail_on = 3  # never: a Report does not fail (the CLI's --fail-on never)
            # as the CLI's check: with no release asked, the model's whole deployment range too
            run.report.deployment_range = command == "check" and os_release is None
            if _lib.al_models_run(_n.ctypes.byref(run)) >= 2:
                raise AnelintError(_lib.al_status_str(run.status).decode(), m.diags.list(), m.name)
            _libc.fflush(f)
            fd = _libc.fileno(f)
            text = os.pread(fd, os.lseek(fd, 0, os.SEEK_END), 0).decode("utf-8")
        finally:
            _libc.fclose(f)
    doc = json.loads(text)
    return Report(doc.get("command", command), [_model(x) for x in doc.get("models", [])], doc, text)


def _file_text(write):
    """What write(FILE *) writes, as text (a temporary file of the C library)."""
    f = _libc.tmpfile()
    if not f:
        raise OSError("anelint: tmpfile() failed")
    try:
        write(f)
        _libc.fflush(f)
        fd = _libc.fileno(f)
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0).decode("utf-8")
    finally:
        _libc.fclose(f)


def check(model, target: Optional[str] = None, os: Optional[str] = None) -> Report:
    """Predict for every layer/op whether the ANE runs it (`anelint check`).
    target: chip family ("a14", "m1", "a17", ...; default a14); os: release ("ios17",
    "macos14", ...; default the newest)."""
    return _report(model, "check", target, os)


def plan(model, target: Optional[str] = None, os: Optional[str] = None, policy: Optional[str] = None) -> Report:
    """How Core ML is predicted to split the model into ANE/GPU/CPU segments (`anelint plan`):
    each Model's .segments, .switches and .fixes (the cheapest rewrites), .summary the totals
    and estimates; every layer's .segment is the segment it is placed in."""
    return _report(model, "plan", target, os, policy)


def baseline(models, path, target: Optional[str] = None, os: Optional[str] = None) -> str:
    """The baseline of the models' findings (`anelint check MODEL... --no-config
    --write-baseline PATH`), as the text that command writes to `path`: model
    paths are relative to path's directory. Nothing is written (al_ci_baseline_*)."""
    import os as _os
    opts = _n.CiOpts(no_config=True, write_baseline=_os.fsencode(path))
    ci = _n.c_void_p()
    st = _lib.al_ci_open(_n.ctypes.byref(opts), _n.ctypes.byref(ci))
    try:
        if st != 0:
            raise AnelintError(_lib.al_status_str(st).decode(), [], _s(_lib.al_ci_messages(ci)) or "")
        b = _lib.al_ci_baseline_begin(ci, _os.fsencode(path))
        if not b:
            raise MemoryError
        try:
            for model in ([models] if isinstance(models, (str, _os.PathLike)) else models):
                check_opts = _check_opts(target, os)
                with _Open(model) as m:
                    m.diags.fail(_lib.al_model_check(m.p, _n.ctypes.byref(check_opts), m.diags.p), m.name)
                    _lib.al_ci_baseline_add(b, m.p)
            text = _lib.al_ci_baseline_json(b)
            if text is None:
                raise MemoryError
            return text.decode("utf-8")
        finally:
            _lib.al_ci_baseline_end(b, False)
    finally:
        _lib.al_ci_free(ci)


def compare(model, evidence, target: Optional[str] = None, os: Optional[str] = None,
            compute_units: Optional[str] = None, evidence_format: str = "auto", format: Optional[str] = None):
    """What a Mac observed against the prediction (`anelint compare MODEL EVIDENCE...`, the
    library's al_compare; docs/evidence.md): evidence is a path or a list of paths of
    evidence files (json, mil, plan, mlperf, oslog, placement; told apart by content
    unless evidence_format names one). target / os / compute_units: where it ran when the
    evidence does not say. Returns the anelint-compare document as a dict, or with
    format="json" / "text" the CLI's output, byte for byte. A model or an evidence file
    that cannot be read raises AnelintError."""
    import os as _os
    if format not in (None, "json", "text"):
        raise ValueError("anelint: format is None, json or text")
    fmt = _lib.al_evidence_format_find(_enc(evidence_format))
    if fmt < 0:
        raise ValueError(f"anelint: evidence formats: json, mil, plan, mlperf, oslog, placement, auto; "
                         f"not '{evidence_format}'")
    where = _n.WhereSpec()
    d = _Diags()
    if _lib.al_where_parse(_enc(target), _enc(os), _enc(compute_units), _n.AL_WHERE_ONE,
                           _n.ctypes.byref(where), d.p):
        raise ValueError(f"anelint: {d.list()[0].message} (see `anelint targets`)")
    paths = [evidence] if isinstance(evidence, (str, _os.PathLike)) else list(evidence)
    if not paths:
        raise ValueError("anelint: compare needs at least one evidence file")
    arr, n = _strings([_os.fspath(p) for p in paths])
    opts = _n.CompareOpts(model=_os.fsencode(model), evidence=arr, n_evidence=n, evidence_format=fmt,
                          where=where.where, json=format != "text")
    res = _n.CompareResult()
    st = _lib.al_compare(_n.ctypes.byref(opts), _n.ctypes.byref(res), d.p)
    try:
        d.fail(st, _os.fspath(model))
        if res.exit_code >= 2:
            raise AnelintError("error", d.list(), _os.fspath(model))
        text = _n.ctypes.string_at(res.doc, res.n_doc).decode("utf-8") if res.doc else ""
    finally:
        _lib.al_compare_result_free(_n.ctypes.byref(res))
    return text if format else json.loads(text)


# ------------------------------------------------------------------ run

def _np():
    import numpy
    return numpy


def _tensor(arr):
    np = _np()
    a = np.ascontiguousarray(arr, dtype=np.float32)
    dims = (_n.ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    t = _lib.al_tensor_new(_n.AL_DT_FP32, a.ndim, dims)
    if not t:
        raise MemoryError
    n = _lib.al_tensor_count(t)
    if n:
        _n.ctypes.memmove(_lib.al_tensor_data(t), a.ctypes.data, n * 4)
    return t


def _array(t):
    np = _np()
    if _lib.al_tensor_dtype(t) == _n.AL_DT_STRING:
        raise AnelintError("unsupported", [], "a text output cannot be returned as an array")
    rank = _lib.al_tensor_rank(t)
    dims = _lib.al_tensor_dims(t)
    shape = tuple(dims[i] for i in range(rank))
    n = _lib.al_tensor_count(t)
    out = np.empty(n, dtype=np.float32)
    if n:
        _n.ctypes.memmove(out.ctypes.data, _lib.al_tensor_data(t), n * 4)
    return out.reshape(shape)


def _inputs(inputs):
    names, tensors = [], []
    for k, v in (inputs or {}).items():
        names.append(k.encode())
        tensors.append(_tensor(v))
    arr = (_n.NamedTensor * max(len(names), 1))()
    for i, (k, t) in enumerate(zip(names, tensors)):
        arr[i].name, arr[i].t = k, t
    return arr, len(names), tensors, names


def _strings(items):
    arr = (_n.c_char_p * max(len(items), 1))(*[os.fsencode(x) for x in items])
    return arr, len(items)


def _exec(fn, opts, what, json_text):
    """One command of the library (al_run_model, al_verify): its result as the CLI's JSON
    document (json_text), else the last call's outputs as arrays."""
    diags = _Diags()
    r = _n.c_void_p()
    st = fn(_n.ctypes.byref(opts), _n.ctypes.byref(r), diags.p)
    try:
        diags.fail(st, what)
        if json_text:
            return _file_text(lambda f: _lib.al_exec_result_json(f, r))
        n = _n.c_size_t()
        v = _lib.al_exec_result_values(r, _n.ctypes.byref(n))
        return {v[i].name.decode(): _array(v[i].t) for i in range(n.value)}
    finally:
        _lib.al_exec_result_free(r)


def _exec_opts(precision, seed, inputs, files, inputs_dir, random):
    if precision not in ("fp32", "fp16"):
        raise ValueError("anelint: precision is fp32 or fp16")
    arr, n, tensors, names = _inputs(inputs)
    farr, nf = _strings(files or [])
    opts = _n.ExecOpts(precision=0 if precision == "fp32" else 1, tol=1e-4)
    opts.in_ = _n.RunInputs(values=arr if n else None, n_values=n, files=farr, n_files=nf,
                            dir=os.fsencode(inputs_dir) if inputs_dir else None, random=random, seed=seed)
    return opts, (arr, tensors, names, farr)


def run(model, inputs: Optional[Dict[str, Any]] = None, precision: str = "fp32", *, seed: int = 1,
        random: bool = False, files=(), inputs_dir=None, function: Optional[str] = None,
        format: Optional[str] = None):
    """Run the model in anelint's reference interpreter (`anelint run`, the library's
    al_run_model): inputs maps each input name to a NumPy array (files: "NAME=FILE.npy"
    as --input, inputs_dir as --inputs DIR, random: draw the rest from seed); returns
    {output name: float32 array}, or with format="json" the CLI's `--format json`
    document, byte for byte but for its timing. precision: "fp32" or "fp16" (ANE-like)."""
    if format not in (None, "json"):
        raise ValueError("anelint: format is None or json")
    opts, keep = _exec_opts(precision, seed, inputs, files, inputs_dir, random)
    opts.keep_values = format is None
    opts.function = function.encode() if function else None
    try:
        with _Open(model) as m:
            opts.model, opts.open_a = m.name.encode(), m.p
            return _exec(_lib.al_run_model, opts, m.name, format == "json")
    finally:
        for t in keep[1]:
            _lib.al_tensor_free(t)


# ------------------------------------------------------------------ verify and fix

@dataclass
class ProofDiff:
    name: str
    identical: bool
    max_abs: float
    rel: float
    passed: bool
    why: Optional[str]
    collapsed: bool = False  # every value 0 where model_a's are not (e.g. under fp16's range): refused
    overflowed: bool = False  # an infinity or NaN where model_a has none: refused


@dataclass
class Proof:
    proved: bool  # both models ran and were compared
    ok: bool  # every output passed
    runs: int
    why: str
    diffs: List[ProofDiff]

    def __bool__(self):
        return self.proved and self.ok


def _prove(a, b, inputs, seed, allow, tolerance=0.0):
    arr, n, tensors, _names = _inputs(inputs)
    p = _n.Proof()
    try:
        opts = _n.ProofOpts(equiv=_n.AL_EQUIV[allow], inputs=arr if n else None, n_inputs=n, seed=seed,
                            tolerance=tolerance or 0.0)
        st = _lib.al_prove_equivalent(a.p, b.p, _n.ctypes.byref(opts), _n.ctypes.byref(p), a.diags.p)
        a.diags.fail(st, f"{a.name} against {b.name}")
        diffs = [ProofDiff(_s(d.name), d.identical, d.max_abs, d.rel, d.pass_, _s(d.why), d.collapsed,
                           d.overflowed)
                 for d in (p.diffs[i] for i in range(p.n_diffs))]
        return Proof(p.proved, p.ok, p.runs, _s(p.why), diffs)
    finally:
        _lib.al_proof_clear(_n.ctypes.byref(p))
        for t in tensors:
            _lib.al_tensor_free(t)


def verify(model_a, model_b, inputs: Optional[Dict[str, Any]] = None, seed: int = 1,
           allow: str = "reassociate", *, format: Optional[str] = None, tol: float = 1e-4,
           precision: str = "fp32", files=(), inputs_dir=None):
    """Run both models on the same inputs (given, else random from seed) and compare every
    output, as `fix` proves its rewrites: allow "exact" (bit-identical), "reassociate"
    (max|diff| <= 1e-5 x max|ref|) or "approximate" (max|diff| <= 1e-2 x max|ref|, and no
    output all zeros or infinite where model_a's is not). The Proof is truthy when both ran
    and every output passed.

    format="json": `anelint verify --format json` instead (the library's al_verify, the
    same bytes as the CLI): max|b - a| <= tol x max|a| per output, inputs as for run
    (random from seed where not given), in fp32 or fp16 precision."""
    if format == "json":
        opts, keep = _exec_opts(precision, seed, inputs, files, inputs_dir, True)
        opts.tol = tol
        try:
            with _Open(model_a) as a, _Open(model_b) as b:
                opts.model, opts.open_a, opts.model_b, opts.open_b = a.name.encode(), a.p, b.name.encode(), b.p
                return _exec(_lib.al_verify, opts, f"{a.name} against {b.name}", True)
        finally:
            for t in keep[1]:
                _lib.al_tensor_free(t)
    if format is not None:
        raise ValueError("anelint: format is None or json")
    if allow not in _n.AL_EQUIV:
        raise ValueError("anelint: allow is exact, reassociate or approximate")
    with _Open(model_a) as a, _Open(model_b) as b:
        return _prove(a, b, inputs, seed, allow)


@dataclass
class Rewrite:
    rule: str  # the rule it answers
    pass_name: str
    layer: str  # the layer in the input model
    applied: bool
    after: Optional[str]  # applied: the new layer(s)
    why_not: Optional[str]  # not applied: why
    round: int = 1  # the round of passes that planned it (fix: round k rewrites round k - 1's output)


@dataclass
class FixResult:
    rewrites: List[Rewrite]
    applied: int
    output: Optional[str]  # the path written (with nothing applied: a copy of the input), or None (no out)
    proof: Optional[Proof]  # the last round against its input (None when nothing was rewritten)
    # a round whose approximate rewrites the proof refused, run again without them: the output
    # and its figures ("tiny: rel 1 (collapsed)"), else None
    approximate_refused: Optional[str] = None
    json: str = ""  # what `anelint fix --format json` prints for the same model and options

    def __str__(self):
        text = f"{self.applied} rewrite{'s' if self.applied != 1 else ''} applied"
        if self.output:
            text += f", wrote {self.output}" + (" (a copy of the input)" if not self.applied else "")
        if self.proof is not None:
            text += ", proved" if self.proof else f", not proved ({self.proof.why or 'outputs differ'})"
        return text


def _allow_class(allow) -> str:
    """allow as the CLI's --allow takes it: a class, a comma list or a list of them; the
    highest one given (the classes are a ladder: approximate includes reassociate)."""
    words = allow.split(",") if isinstance(allow, str) else [w for a in allow for w in str(a).split(",")]
    if not words or any(w not in _n.AL_EQUIV for w in words):
        raise ValueError("anelint: allow is exact, reassociate or approximate (a comma list, or a list)")
    return max(words, key=lambda w: _n.AL_EQUIV[w])


def _fix_proof(j):
    """The library's JSON proof object as a Proof (None: nothing was proved)."""
    if not j:
        return None
    diffs = [ProofDiff(d["name"], d["identical"], d["max_abs"], d["rel"], d["pass"], None, d["collapsed"],
                       d["overflowed"]) for d in j.get("outputs", [])]
    return Proof(j["proved"], j["pass"], j["runs"], j.get("note") or "", diffs)


def fix(model, out=None, allow="exact", skip=(), seed: int = 1, max_rounds: int = 8,
        tolerance: Optional[float] = None, target: Optional[str] = None, os: Optional[str] = None,
        proof: str = "auto", threads: int = 0, shapes: Optional[Dict[str, Any]] = None,
        inputs: Optional[str] = None, function: Optional[str] = None) -> FixResult:
    """Rewrite the model so more of it runs on the ANE (`anelint fix`, one call of the C
    library's al_model_fix): the rewrites of class `allow` and at most that (exact, reassociate,
    approximate; a comma list or a list: the highest), leaving the layers named in skip
    alone, in rounds (each on the previous round's output, at most max_rounds), each proved
    in the reference interpreter (proof: auto, whole or region; an approximate rewrite
    within tolerance, default 1e-2, no output collapsing to zeros or overflowing). With out
    (a path; a .mlpackage for ML Program input) the last round's output is written there
    (the bytes `anelint fix -o` writes; with nothing to rewrite, a byte-identical copy of
    the input); without out, nothing is written (`--dry-run`). A refused proof raises
    AnelintError and writes nothing. shapes fixes inputs' shapes ({name: (1, 3, 224, 224)}
    as --shape, {name: "default"}, {name: [shape, shape, ...]} as --enumerate); inputs is a
    directory of NAME.npy for the whole proof (--inputs), function the function of a
    multifunction program rewritten. FixResult.json is the text `anelint fix --format json`
    prints for the same options. Rewrite.round says which round planned each."""
    import tempfile
    allow = _allow_class(allow)
    if not 1 <= int(max_rounds) <= 64:
        raise ValueError("anelint: max_rounds is 1 to 64")
    if tolerance is not None and not (0 < float(tolerance) < float("inf")):
        raise ValueError("anelint: tolerance is a positive relative difference, e.g. 1e-2")
    if proof not in _n.AL_FIX_PROOF:
        raise ValueError("anelint: proof is auto, whole or region")
    check_opts = _check_opts(target, os)
    import os as _os
    scratch = None
    path = _model_path(model)
    if path is None:  # bytes or a spec: a file the library can open (and the rounds re-open)
        scratch = tempfile.mkdtemp(prefix="anelint-py-")
        path = _os.path.join(scratch, "model.mlmodel")
        with open(path, "wb") as f:
            f.write(bytes(_model_bytes(model)))
    skip_b = [str(x).encode() for x in skip]
    skip_arr = (_n.c_char_p * max(len(skip_b), 1))(*skip_b)
    shape_arr, n_shapes, _keep = _input_shapes(shapes or {})
    opts = _n.FixOpts(input=_os.fsencode(_os.fspath(path)),
                      output=None if out is None else _os.fsencode(_os.fspath(out)), dry_run=out is None,
                      allow=_n.AL_EQUIV[allow], tolerance=float(tolerance or 0.0), max_rounds=int(max_rounds),
                      proof=_n.AL_FIX_PROOF[proof], skip=skip_arr, n_skip=len(skip_b), check=check_opts,
                      seed=int(seed), threads=int(threads), shapes=shape_arr, n_shapes=n_shapes,
                      inputs=None if inputs is None else _os.fsencode(_os.fspath(inputs)),
                      function=None if function is None else str(function).encode())
    res = _n.FixResult()
    diags = _Diags()
    try:
        st = _lib.al_model_fix(_n.ctypes.byref(opts), _n.ctypes.byref(res), diags.p)
        try:
            name = _os.fspath(path)
            diags.fail(st, name)
            if res.usage:
                raise AnelintError("invalid argument", [Diagnostic("error", name, None, None, None,
                                                                   _s(res.usage))], name)
            if not res.decided:
                status = {1: "proof", 2: "invalid argument", 3: "format error", 4: "I/O error"}
                raise AnelintError(status.get(res.exit_code, "error"), diags.list(), name)
            text = _sink_fix(res)
        finally:
            _lib.al_fix_result_free(_n.ctypes.byref(res))
    finally:
        if scratch:
            import shutil
            shutil.rmtree(scratch, ignore_errors=True)
    doc = json.loads(text)
    rewrites = [Rewrite(w["rule"], w["pass"], w["layer"], w["applied"], w.get("after"), w.get("why_not"),
                        w["round"]) for w in doc["rewrites"]]
    refused = next((r["approximate_refused"] for r in doc["rounds"] if r.get("approximate_refused")), None)
    result = FixResult(rewrites, sum(r["applied"] for r in doc["rounds"]),
                       _os.fspath(out) if out is not None and doc["written"] else None,
                       _fix_proof(doc["proof"]), refused, text)
    if doc["refused"]:
        n = len(doc["rounds"])
        at = f"round {n}: " if n > 1 else ""
        why = result.proof.why if result.proof and result.proof.why else "outputs differ"
        raise AnelintError("proof", [], f"{_os.fspath(out) if out is not None else name}: {at}the rewritten "
                                        f"model does not compute what its input does ({why}); nothing written")
    return result


def _input_shapes(shapes):
    """{name: shape | "default" | [shapes]} as al_input_shape requests (and what they borrow)."""
    arr = (_n.InputShape * max(len(shapes), 1))()
    keep = []
    for i, (name, v) in enumerate(shapes.items()):
        arr[i].input = str(name).encode()
        if isinstance(v, str) and v == "default":
            arr[i].use_default = True
        else:
            many = len(v) > 0 and all(isinstance(x, (list, tuple)) for x in v)
            rows = [tuple(int(d) for d in x) for x in (v if many else [v])]
            if not rows or not rows[0] or any(len(r) != len(rows[0]) or min(r) < 1 for r in rows):
                raise ValueError(f"anelint: shapes['{name}'] is a shape of positive integers, \"default\" "
                                 "or a list of shapes of one rank")
            dims = (_n.ctypes.c_int64 * (len(rows) * len(rows[0])))(*[d for r in rows for d in r])
            arr[i].dims, arr[i].rank, arr[i].n_shapes = dims, len(rows[0]), len(rows) if many else 0
            keep.append(dims)  # the arrays arr points into, alive as long as it is used
    return arr, len(shapes), keep


def _sink_fix(res):
    """al_fix_write_json of a result, as text."""
    f = _libc.tmpfile()
    if not f:
        raise OSError("anelint: tmpfile() failed")
    try:
        _lib.al_fix_write_json(f, _n.ctypes.byref(res))
        _libc.fflush(f)
        fd = _libc.fileno(f)
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0).decode("utf-8")
    finally:
        _libc.fclose(f)


def _remove(path):
    import shutil
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
