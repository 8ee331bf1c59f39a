#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkobserved.py: writes the fidelity test set tests/observed/ (docs/fidelity.md).

Each case rebuilds, as a small Core ML model of our own, one construct of one
public placement report (shared/knowledge/placement-evidence.md section 4, or
the older catalog facts it cites), and records where Core ML was seen to run
each op: "ane", "cpu", "gpu", "gpu_or_cpu" (the report names no single unit) or
"not_ane" (the report says only that it is not on the ANE). The reports ship
no models: shapes, ops and dtypes follow the report's text; weights are zeros.

Writes tests/observed/models/<case>.mlpackage (ML Program) or
<case>.mlmodel (NeuralNetwork), tests/observed/cases.json and tests/observed/README.md. Deterministic:
the same bytes every run (`python3 tools/mkobserved.py --check` regenerates
into a temporary directory and compares with the committed files).

Python stdlib only. The protobuf bytes come from tools/pbwire.py and the
message helpers of tools/mkfixtures.py / tools/mkfixtures_mil.py (imported,
not copied); field numbers from coreml-format-facts.md sections 4, 5, 7, 8.

    python3 tools/mkobserved.py [--out DIR] [--check]
"""

import filecmp
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/, whatever the cwd
sys.dont_write_bytecode = True  # no tools/__pycache__ in the work tree
from pbwire import f_bytes, f_msg, f_packed_varints, f_str, f_varint  # noqa: E402
from mkfixtures import (FLOAT16, FLOAT32, INT32, DT, description, layer, model,  # noqa: E402
                        named, op, ttype, v_floats, v_ints, v_string, value, weights_f16)
from mkfixtures_mil import v_blob, v_bool, v_half_scalar, weight_bin, write_package  # noqa: E402

DT.update({"int16": 22, "uint4": 35, "uint6": 38, "int4": 25, "uint8": 31})
BLOB_DT = {"fp16": 1, "fp32": 2, "uint8": 3, "int8": 4, "int4": 8, "uint4": 11, "uint6": 13}
NBITS = {"fp16": 16, "fp32": 32, "uint8": 8, "int8": 8, "int4": 4, "uint4": 4, "uint6": 6}
SPEC = {"CoreML6": 7, "CoreML7": 8, "CoreML8": 9}
ARRAY_DT = {"fp16": FLOAT16, "fp32": FLOAT32, "int32": INT32}
NOTE = "anelint fidelity set (tools/mkobserved.py): rebuilt from a public report, zero weights"

# ---------------------------------------------------------------- ML Program builder


def xtype(dtype, dims):
    """ValueType{tensorType}; a None dim is UnknownDimension (flexible)."""
    t = [f_varint(1, DT[dtype]), f_varint(2, len(dims))]
    t += [f_msg(3, f_msg(2)) if d is None else f_msg(3, f_msg(1, f_varint(1, d))) for d in dims]
    return f_msg(1, *t)


def state_type(dtype, dims):  # ValueType{stateType = 5 {wrappedType = 1}}
    return f_msg(5, f_msg(1, xtype(dtype, dims)))


def feature(name, dtype, dims, rng=None, enum=None, state=False):
    """FeatureDescription for a multi-array (or state) input/output. rng: one
    (lower, upper) per dim -> ShapeRange 31; enum: list of shapes -> 21."""
    arr = [f_packed_varints(1, [d if d is not None else 1 for d in dims]), f_varint(2, ARRAY_DT[dtype])]
    if enum:
        arr.append(f_msg(21, *[f_msg(1, f_packed_varints(1, s)) for s in enum]))
    if rng:
        arr.append(f_msg(31, *[f_msg(1, f_varint(1, lo), f_varint(2, hi)) for lo, hi in rng]))
    ft = f_msg(8, f_msg(1, *arr)) if state else f_msg(5, *arr)
    return f_str(1, name) + f_msg(3, ft)


def nelems(dims):
    n = 1
    for d in dims:
        n *= d
    return n


class Prog:
    """One ML Program function "main": inputs, ops (in order), blob weights."""

    def __init__(self, opset="CoreML8"):
        self.opset = opset
        self.ops = []          # encoded Operation messages of the current block
        self.stack = []        # enclosing blocks while building cond / while_loop
        self.fn_inputs, self.feats_in = [], []
        self.blobs, self.next_meta, self.k = [], 64, 0
        self.nodes = []        # (output name, op type) of every non-const op, in model order

    def _n(self, p):
        self.k += 1
        return "%s_%d" % (p, self.k)

    def inp(self, name, dtype, dims, rng=None, enum=None):
        self.fn_inputs.append(named(name, xtype(dtype, dims)))
        self.feats_in.append(feature(name, dtype, dims, rng, enum))
        return name

    def state(self, name, dims):
        self.fn_inputs.append(named(name, state_type("fp16", dims)))
        self.feats_in.append(feature(name, "fp16", dims, state=True))
        return name

    # constants
    def _const(self, val, vtype, prefix="c"):
        name = self._n(prefix)
        self.ops.append(op("const", [], [(name, vtype)], {"val": val}))
        return name

    def ci(self, vals, scalar=False):
        if scalar:
            return self._const(v_ints([vals], []), ttype("int32", []))
        return self._const(v_ints(vals), ttype("int32", [len(vals)]))

    def cb(self, b):
        return self._const(v_bool(b), ttype("bool", []))

    def cbv(self, vals):
        """A bool vector constant (TensorValue.bools)."""
        return self._const(value(ttype("bool", [len(vals)]), f_msg(3, f_packed_varints(1, vals))),
                           ttype("bool", [len(vals)]))

    def cs(self, s):
        return self._const(v_string(s), ttype("string", []))

    def ch(self, x):
        return self._const(v_half_scalar(x), ttype("fp16", []))

    def cf(self, x):
        return self._const(v_floats([x], []), ttype("fp32", []))

    def blob_value(self, dtype, dims, data=None):
        """A Value referring to a new weight.bin blob (zeros unless data is given)."""
        nb = (nelems(dims) * NBITS[dtype] + 7) // 8
        data = bytes(nb) if data is None else data
        meta = self.next_meta
        self.blobs.append((BLOB_DT[dtype], data))
        end = meta + 64 + len(data)
        self.next_meta = (end + 63) // 64 * 64
        return v_blob(dtype, dims, meta)

    def w(self, dims, dtype="fp16", prefix="w"):
        """A zero weight: a blob when >= 10 elements (as coremltools writes), else immediate."""
        n = nelems(dims)
        if n >= 10 or dtype not in ("fp16", "fp32"):
            return self._const(self.blob_value(dtype, dims), xtype(dtype, dims), prefix)
        size = 2 if dtype == "fp16" else 4
        tv = f_msg(7, f_bytes(1, bytes(size * n))) if dtype == "fp16" else \
            f_msg(1, f_bytes(1, bytes(4 * n)))
        return self._const(value(xtype(dtype, dims), tv), xtype(dtype, dims), prefix)

    def op(self, type_, ins, out, dtype="fp16", dims=(), attrs=None, outs=None, blocks=None, count=True):
        """An op with inputs [(param, var or [vars])]; outputs `out` (dtype, dims) and
        `outs` [(name, dtype, dims)] after it. Returns the first output name."""
        all_outs = [(out, dtype, list(dims))] + list(outs or [])
        parts = [f_str(1, type_)]
        for param, var in ins:
            vs = var if isinstance(var, list) else [var]
            args = b"".join(f_msg(1, f_str(1, v)) for v in vs)
            parts.append(f_msg(2, f_str(1, param), f_msg(2, args)))
        parts += [f_msg(3, named(n, xtype(dt, ds))) for n, dt, ds in all_outs]
        for b in blocks or []:
            parts.append(f_msg(4, b))
        a = dict(attrs or {})
        a.setdefault("name", v_string(out))
        for k in sorted(a):
            parts.append(f_msg(5, f_str(1, k), f_msg(2, a[k])))
        self.ops.append(f_msg(3, *parts))
        if count:
            self.nodes.append((out, type_))
        return out

    def begin_block(self):
        self.stack.append(self.ops)
        self.ops = []

    def end_block(self, outputs, inputs=()):
        """Block{inputs 1 (NamedValueType), outputs 2, operations 3}."""
        body = b"".join(f_msg(1, named(n, xtype(dt, ds))) for n, dt, ds in inputs) + \
            b"".join(f_str(2, o) for o in outputs) + b"".join(self.ops)
        self.ops = self.stack.pop()
        return body

    def build(self, outputs, short):
        """outputs: [(name, dtype, dims)]. Returns (model bytes, weight.bin bytes or None)."""
        block = b"".join(f_str(2, o) for o, _, _ in outputs) + b"".join(self.ops)
        fn = b"".join(f_msg(1, i) for i in self.fn_inputs) + f_str(2, self.opset) + \
            f_msg(3, f_str(1, self.opset), f_msg(2, block))
        prog = f_varint(1, 1) + f_msg(2, f_str(1, "main"), f_msg(2, fn))
        desc = description(self.feats_in, [feature(n, dt, ds) for n, dt, ds in outputs],
                           short=short, weights=NOTE)
        weights = None
        if self.blobs:
            weights, offs = weight_bin(self.blobs)
            assert len(offs) == len(self.blobs)
        return model(SPEC[self.opset], desc, 502, prog), weights


# ---------------------------------------------------------------- NeuralNetwork helpers


def nn_feature(name, dims, rng=None):
    return feature(name, "fp32", dims, rng)


def nn_conv(cin, cout, k, stride=1, dil=1, groups=1, same=True):
    """ConvolutionLayerParams: outputChannels 1, kernelChannels 2, nGroups 10, kernelSize 20,
    stride 30, dilationFactor 40, valid 50 / same 51, weights 90 (fp16 zeros)."""
    return b"".join([f_varint(1, cout), f_varint(2, cin // groups), f_varint(10, groups),
                     f_packed_varints(20, [k, k]), f_packed_varints(30, [stride, stride]),
                     f_packed_varints(40, [dil, dil]), f_msg(51) if same else f_msg(50),
                     f_msg(90, weights_f16(cout * (cin // groups) * k * k))])


def nn_pool(kind, k, s, same=False, glob=False):
    """PoolingLayerParams: type 1 (0 max, 1 average), kernelSize 10, stride 20, valid 30 /
    same 31, globalPooling 60."""
    return b"".join([f_varint(1, kind), f_packed_varints(10, [k, k]), f_packed_varints(20, [s, s]),
                     f_msg(31) if same else f_msg(30), f_varint(60, 1) if glob else b""])


RELU = f_msg(10)  # ActivationParams.ReLU


class NN:
    """A NeuralNetwork (spec 4, EXACT array mapping); layer name = its output name."""

    def __init__(self):
        self.layers, self.nodes = [], []

    def add(self, out, ins, type_field, params, type_name):
        self.layers.append(layer(out, ins, [out], type_field, params))
        self.nodes.append((out, type_name))
        return out

    def build(self, inputs, outputs, short, spec=4):
        body = b"".join(self.layers) + f_varint(5, 1)
        desc = description(inputs, [nn_feature(o, []) for o in outputs], short=short, weights=NOTE)
        return model(spec, desc, 500, body), None


# ---------------------------------------------------------------- reports

REPORTS = {
    "fa-lstm-no-ane-kernel": "https://github.com/FluidInference/FluidAudio/blob/main/Documentation/ANE_Profiler.md",
    "fa-joint-logits-vocab-threshold": "https://github.com/FluidInference/FluidAudio/blob/main/Documentation/ANE_Profiler.md",
    "fa-small-graph-cpu": "https://github.com/FluidInference/FluidAudio/blob/main/Documentation/ANE_Profiler.md",
    "fa-rank5-kv-scatter": "https://github.com/FluidInference/FluidAudio/pull/679",
    "fa-rangedim-vs-fixed-buckets": "https://github.com/FluidInference/FluidAudio/blob/main/Documentation/ANE_Profiler.md",
    "fa-cohere-rangedim-mask": "https://github.com/FluidInference/FluidAudio/pull/537",
    "fa-kokoro-fp32-vs-fp16-lstm": "https://github.com/FluidInference/FluidAudio/pull/411",
    "fa-kokoro-istft-sourcegen": "https://github.com/FluidInference/FluidAudio/pull/671",
    "mobius-stateful-kv-decode-rejected": "https://github.com/FluidInference/mobius/pull/77",
    "vx-sdpa-size-threshold": "https://github.com/vx-lang/Vx/issues/437",
    "stablehlo-quant-constexpr-cpu": "https://github.com/kasper0406/stablehlo-coreml/pull/110",
    "stablehlo-small-graph-cpu": "https://github.com/kasper0406/stablehlo-coreml/pull/110",
    "larql-matmul-reduction-depth": "https://github.com/chrishayuk/larql/pull/312",
    "ct2510-per-block-quant": "https://github.com/apple/coremltools/issues/2510",
    "ct2687-softplus-topology": "https://github.com/apple/coremltools/issues/2687",
    "ct2814-softplus-m2pro": "https://github.com/apple/coremltools/pull/2814",
    "ct2208-while-loop": "https://github.com/apple/coremltools/issues/2208",
    "anemll-gemma-ffn-fallback": "https://github.com/Anemll/Anemll/blob/main/anemll/utils/ANE_PROFILER.md",
    "ct2631-state-width-mult32": "https://github.com/apple/coremltools/issues/2631",
    "ct2553-stateful-kv-seqlen": "https://github.com/apple/coremltools/issues/2553",
    "smdesai-w240000-dim-cap": "https://github.com/smdesai/parakeet-tdt-v2-coreml/blob/main/context/mel_encoder_ane_behavior.md",
    "smpanaro-lm-head-cpu": "https://github.com/smpanaro/more-ane-transformers/blob/main/src/experiments/NOTES.md",
    "smpanaro-band-part": "https://github.com/smpanaro/more-ane-transformers/blob/main/src/experiments/NOTES.md",
    "smpanaro-fp32-mask": "https://github.com/smpanaro/more-ane-transformers/blob/main/src/experiments/NOTES.md",
    "smpanaro-cond-not-ane": "https://github.com/smpanaro/more-ane-transformers/blob/main/src/experiments/NOTES.md",
    "smpanaro-enum-plus-range": "https://github.com/smpanaro/more-ane-transformers/blob/main/src/experiments/NOTES.md",
    "coremlinspect-gather-no-ane": "https://github.com/smpanaro/CoreMLInspect",
    "forums-gridsample-npu": "https://developer.apple.com/forums/thread/745778",
    "ct2299-gridsample-macos15": "https://github.com/apple/coremltools/issues/2299",
    "et8445-final-linear-cpu": "https://github.com/pytorch/executorch/issues/8445",
    "ct1764-flexible-shape-cpu": "https://github.com/apple/coremltools/issues/1764",
    "coreai-rule-fp32": "https://github.com/apple/coreai-models/blob/main/skills/skills/model-authoring/references/neural_engine_rules.md",
    "coreai-rule-rank-gathernd": "https://github.com/apple/coreai-models/blob/main/skills/skills/model-authoring/references/neural_engine_rules.md",
    "coreai-rule-silu-swish-fp32": "https://github.com/apple/coreai-models/blob/main/skills/skills/model-authoring/references/common_issues.md",
    "coreai-rule-strides": "https://github.com/apple/coreai-models/blob/main/skills/skills/model-authoring/references/neural_engine_rules.md",
    "ct-pr2688-palettize-per-channel-scale": "https://github.com/apple/coremltools/pull/2688",
    "gigastt-fixed-shape-palettized": "https://github.com/ekhodzitsky/gigastt/issues/42",
    "fa-int8-encoder-ane": "https://github.com/FluidInference/FluidAudio/blob/main/Documentation/ANE_Profiler.md",
    "voxcpm-m5max-rmsnorm-ane": "https://github.com/0seba/VoxCPMANE/issues/15",
    "aosama-size-floor": "https://github.com/aosama/astronomical/issues/540",
    "ct1761-bmm-gpu": "https://github.com/apple/coremltools/issues/1761",
    "smdesai-int8-encoder-split-pipeline": "https://github.com/smdesai/parakeet-tdt-v2-coreml/blob/main/OPTIMIZATIONS.md",
    # older facts of ane-rules-catalog.md (sections 1 and 5) that the issue asks to test
    "mobius-67-rank4-scatter": "https://github.com/FluidInference/mobius/pull/67",
    "hollance-2-pool-stride4": "https://github.com/hollance/neural-engine/issues/2",
    "hollance-unsupported-dilated-conv": "https://github.com/hollance/neural-engine/blob/master/docs/unsupported-layers.md",
    "hollance-1-gap-valid": "https://github.com/hollance/neural-engine/issues/1",
    "catalog-L7-matmul-384-512": "https://github.com/vx-lang/Vx/issues/435",
    "vx-436-matmul-4x4": "https://github.com/vx-lang/Vx/issues/436",
    # second batch (shared/knowledge/placement-evidence-2026-12.md, items 10, 12 and 13): Core AI
    # (iOS / macOS 27) reports, rebuilt as ML Programs predicted for ios27 like the coreai-rule-* cases
    "coreai205-int4-static-llm-gpu": "https://github.com/apple/coreai-models/issues/205",
    "coreai279-per-block-int8-ane": "https://github.com/apple/coreai-models/issues/279",
    "zoo36-granite-fp32-upcasts": "https://github.com/john-rocky/coreai-model-zoo/pull/36",
}

# The compute units (MLModelConfiguration.computeUnits) a report ran with, where it says so (or
# its tool or script does); every other case is predicted for "all", Core ML's default and
# MLComputePlan's, and marked assumed. anelint check --compute-units takes the same names.
COMPUTE_UNITS = {
    # ANE_Profiler.md: "computeUnits=.cpuAndNeuralEngine" for the profiled components
    "fa-lstm-no-ane-kernel": "cpu-and-ne",
    "fa-small-graph-cpu": "cpu-and-ne",
    # the model comes from executorch examples/apple/coreml/llama/export.py, whose compile specs
    # set compute_unit=ct.ComputeUnit.CPU_AND_NE
    "et8445-final-linear-cpu": "cpu-and-ne",
    # the MLComputePlan script loads the plan with compute_units=CPU_AND_NE
    "voxcpm-m5max-rmsnorm-ane": "cpu-and-ne",
    # "compiled for CPU_AND_NE"
    "aosama-size-floor": "cpu-and-ne",
    # CoreMLInspect's dump: "Analyzing model for compute unit [all]"
    "coremlinspect-gather-no-ane": "all",
    # Vx #436: "ComputeUnit.ALL -> CPU; ComputeUnit.CPU_AND_NE -> CPU" (the same either way)
    "vx-436-matmul-4x4": "all",
    # the compute plans put ops on the GPU, which only .all (or .cpuAndGPU) allows
    "fa-kokoro-istft-sourcegen": "all",
    "anemll-gemma-ffn-fallback": "all",
    # coremltools #2510: "When using per_block quantization with compute_units="CPU_AND_ANE", the
    # model falls back to CPU execution"
    "ct2510-per-block-quant": "cpu-and-ne",
    # coreai-models #279 measured each asset with compute unit "Neural Engine" against "GPU"
    "coreai279-per-block-int8-ane": "cpu-and-ne",
    # coreai-models #205: --preferred-compute neural-engine is a preference; the failed ANE compile
    # left a GPU-only plan, which only .all (or .cpuAndGPU) allows
    "coreai205-int4-static-llm-gpu": "all",
}

# macOS / other names -> the iOS release of the same year (issue #15 item 1)
IOS_OF = {"macos13": "ios16", "macos14": "ios17", "macos15": "ios18", "macos26": "ios26",
          "macos27": "ios27"}

CASES = []
OPSET_FOR_CASE = ["CoreML7"]  # set by generate() for builders that follow their case's release
MIN_IOS = {"CoreML6": 16, "CoreML7": 17, "CoreML8": 18}  # opset -> the release that runs it


def case(cid, report, tags, chip, os_reported, note, default, over=None, chip_assumed=False,
         os_assumed=False, conf="close"):
    """Register a case: the builder function returns (prog-or-nn, outputs, short)."""
    def reg(fn):
        CASES.append(dict(id=cid, report=report, tags=tags, chip=chip, os_reported=os_reported,
                          note=note, default=default, over=over or {}, chip_assumed=chip_assumed,
                          os_assumed=os_assumed, conf=conf, fn=fn))
        return fn
    return reg


# ---------------------------------------------------------------- building blocks

def lut4(p, dims, nm="w_pal"):
    """A 4-bit palettized weight (iOS 18 constexpr_lut_to_dense, one 16-entry fp16 table)."""
    idx = p._const(p.blob_value("uint4", dims), xtype("uint4", dims), nm + "_idx")
    lut = p._const(p.blob_value("fp16", [1, 1, 16, 1]), xtype("fp16", [1, 1, 16, 1]), nm + "_lut")
    return p.op("constexpr_lut_to_dense", [("indices", idx), ("lut", lut)], p._n(nm), "fp16", dims, count=False)


def qweight(p, dims, kind, block=32):
    """A compressed [dout, din] weight: "block_int8" / "block_int4" (constexpr_blockwise_shift_scale,
    one fp16 scale per `block` input columns: per-block) or "pal8_g32" (constexpr_lut_to_dense, 8-bit
    indices, one 256-entry table per `block` output channels: per-grouped-channel palettization)."""
    dout, din = dims
    if kind in ("block_int8", "block_int4"):
        dt = kind[6:]
        d = p._const(p.blob_value(dt, dims), xtype(dt, dims), "q")
        sc = p._const(p.blob_value("fp16", [dout, din // block]), xtype("fp16", [dout, din // block]), "s")
        return p.op("constexpr_blockwise_shift_scale", [("data", d), ("scale", sc)], p._n("w_dq"), "fp16", dims,
                    count=False)
    assert kind == "pal8_g32", kind
    idx = p._const(p.blob_value("uint8", dims), xtype("uint8", dims), "idx")
    lut = p._const(p.blob_value("fp16", [dout // block, 1, 256, 1]), xtype("fp16", [dout // block, 1, 256, 1]),
                   "lut")
    return p.op("constexpr_lut_to_dense", [("indices", idx), ("lut", lut)], p._n("w_pal"), "fp16", dims,
                count=False)


def lin(p, name, x, xdims, din, dout, wdtype="fp16", dtype="fp16"):
    if wdtype == "lut4":
        w = lut4(p, [dout, din])
    elif wdtype in ("block_int8", "block_int4", "pal8_g32"):
        w = qweight(p, [dout, din], wdtype)
    else:
        w = p.w([dout, din], wdtype)
    return p.op("linear", [("x", x), ("weight", w)], name, dtype, list(xdims[:-1]) + [dout])


def conv(p, name, x, cin, cout, k, hw, stride=1, dil=1, groups=1, pad="same", weight=None, dtype="fp16"):
    w = weight or p.w([cout, cin // groups, k, k], dtype)
    oh = [(d + stride - 1) // stride if pad == "same" else (d - dil * (k - 1) - 1) // stride + 1 for d in hw]
    ins = [("x", x), ("weight", w), ("strides", p.ci([stride, stride])), ("pad_type", p.cs(pad)),
           ("pad", p.ci([0, 0, 0, 0])), ("dilations", p.ci([dil, dil])), ("groups", p.ci(groups, True))]
    return p.op("conv", ins, name, dtype, [1, cout] + oh)


def unary(p, t, name, x, dims, dtype="fp16"):
    return p.op(t, [("x", x)], name, dtype, dims)


def binary(p, t, name, x, y, dims, dtype="fp16"):
    return p.op(t, [("x", x), ("y", y)], name, dtype, dims)


def cast(p, name, x, to, dims):
    return p.op("cast", [("x", x), ("dtype", p.cs(to))], name, to, dims)


def matmul(p, name, x, y, dims, tx=False, ty=False, dtype="fp16"):
    return p.op("matmul", [("x", x), ("y", y), ("transpose_x", p.cb(tx)), ("transpose_y", p.cb(ty))],
                name, dtype, dims)


def softmax(p, name, x, dims, axis=-1, dtype="fp16"):
    return p.op("softmax", [("x", x), ("axis", p.ci(axis, True))], name, dtype, dims)


def reshape(p, name, x, dims, dtype="fp16"):
    shape = [-1 if d is None else d for d in dims]
    return p.op("reshape", [("x", x), ("shape", p.ci(shape))], name, dtype, dims)


def transpose(p, name, x, perm, dims, dtype="fp16"):
    return p.op("transpose", [("x", x), ("perm", p.ci(perm))], name, dtype, dims)


def layer_norm(p, name, x, dims, c):
    return p.op("layer_norm", [("x", x), ("axes", p.ci([-1])), ("gamma", p.w([c])), ("beta", p.w([c])),
                               ("epsilon", p.ch(1e-5))], name, "fp16", dims)


def attention_block(p, x, S, C, H, prefix="", mask=None, wdtype="fp16"):
    """A pre-norm transformer block on x [1,S,C]: layer_norm, q/k/v linear, per-head
    attention (matmul, softmax, matmul), output linear, residual, FFN (4C, gelu)."""
    D = C // H
    n = layer_norm(p, prefix + "ln1", x, [1, S, C], C)
    q = lin(p, prefix + "q", n, [1, S, C], C, C, wdtype)
    k = lin(p, prefix + "k", n, [1, S, C], C, C, wdtype)
    v = lin(p, prefix + "v", n, [1, S, C], C, C, wdtype)
    heads = []
    for nm, t in (("q", q), ("k", k), ("v", v)):
        r = reshape(p, prefix + nm + "_heads", t, [1, S, H, D])
        heads.append(transpose(p, prefix + nm + "_t", r, [0, 2, 1, 3], [1, H, S, D]))
    s = matmul(p, prefix + "scores", heads[0], heads[1], [1, H, S, S], ty=True)
    if mask is not None:
        s = binary(p, "add", prefix + "masked", s, mask, [1, H, S, S])
    a = softmax(p, prefix + "attn", s, [1, H, S, S])
    o = matmul(p, prefix + "ctx", a, heads[2], [1, H, S, D])
    o = transpose(p, prefix + "ctx_t", o, [0, 2, 1, 3], [1, S, H, D])
    o = reshape(p, prefix + "ctx_flat", o, [1, S, C])
    o = lin(p, prefix + "o", o, [1, S, C], C, C, wdtype)
    x = binary(p, "add", prefix + "res1", x, o, [1, S, C])
    n = layer_norm(p, prefix + "ln2", x, [1, S, C], C)
    f = lin(p, prefix + "ff1", n, [1, S, C], C, 4 * C, wdtype)
    f = p.op("gelu", [("x", f), ("mode", p.cs("EXACT"))], prefix + "gelu", "fp16", [1, S, 4 * C])
    f = lin(p, prefix + "ff2", f, [1, S, 4 * C], 4 * C, C, wdtype)
    return binary(p, "add", prefix + "res2", x, f, [1, S, C])


# ---------------------------------------------------------------- the cases
# R3 SDPA shape sweep: single-op models, Vx #437 (M4)

def _sdpa(shape, dtype="fp16"):
    def fn():
        p = Prog("CoreML8")
        q, k, v = (p.inp(n, dtype, shape) for n in ("q", "k", "v"))
        p.op("scaled_dot_product_attention", [("query", q), ("key", k), ("value", v)], "sdpa", dtype, shape)
        return p, [("sdpa", dtype, shape)], "SDPA %s %s" % ("x".join(map(str, shape)), dtype)
    return fn


for _shape, _unit in (([1, 1, 128, 64], "cpu"), ([1, 1, 2048, 128], "cpu"), ([1, 8, 512, 64], "cpu"),
                      ([1, 16, 1024, 64], "cpu"), ([1, 16, 2048, 64], "ane"), ([1, 32, 1024, 128], "ane")):
    case("sdpa_%s" % "x".join(map(str, _shape)), "vx-sdpa-size-threshold", ["R3"], "a17", "macos26",
         "single-op SDPA fp16 %s -> %s in the MLComputePlan shape sweep" % ("x".join(map(str, _shape)), _unit),
         _unit, os_assumed=True, conf="exact")(_sdpa(_shape))
case("sdpa_fp32_1x32x1024x128", "vx-sdpa-size-threshold", ["R1", "R3"], "a17", "macos26",
     "fp32 SDPA 1x32x1024x128 -> CPU, although its fp16 twin runs on the ANE", "cpu", os_assumed=True,
     conf="exact")(_sdpa([1, 32, 1024, 128], "fp32"))
case("sdpa_fp32_1x16x1024x64", "vx-sdpa-size-threshold", ["R1", "R3"], "a17", "macos26",
     "fp32 SDPA 1x16x1024x64 -> CPU", "cpu", os_assumed=True, conf="exact")(_sdpa([1, 16, 1024, 64], "fp32"))


# R3 joint network: logits 640 -> 13088 on the ANE, <= 2829 (or 1025) on the CPU (M5)

def _joint(vocab):
    def fn():
        p = Prog("CoreML8")
        J = 640  # the report's sizes (19 MB of weights for vocab 13088): the work is what crosses the threshold
        e = p.inp("encoder_step", "fp16", [1, 1, 1024])
        d = p.inp("decoder_step", "fp16", [1, 1, J])
        a = lin(p, "enc_proj", e, [1, 1, 1024], 1024, J)
        b = lin(p, "dec_proj", d, [1, 1, J], J, J)
        s = binary(p, "add", "joint_sum", a, b, [1, 1, J])
        r = unary(p, "relu", "joint_relu", s, [1, 1, J])
        lin(p, "logits", r, [1, 1, J], J, vocab)
        return p, [("logits", "fp16", [1, 1, vocab])], "RNNT joint, vocab %d" % vocab
    return fn


case("joint_vocab13088", "fa-joint-logits-vocab-threshold", ["R3", "R9"], "a18", "macos26",
     "joint with logits 640->13088: on the ANE (MLComputePlan per-op tally)", "ane", conf="exact")(_joint(13088))
case("joint_vocab2829", "fa-joint-logits-vocab-threshold", ["R3", "R9"], "a18", "macos26",
     "same joint with vocab 2829 (latin/es): entire model on the CPU", "cpu", conf="exact")(_joint(2829))
case("joint_vocab1025_single_step", "smdesai-int8-encoder-split-pipeline", ["R3"], "a17", "macos26",
     "4-model split: joint decision single-step on the CPU (per-stage statement)", "cpu",
     chip_assumed=True, os_assumed=True)(_joint(1025))


# R3 small MLP stacks, stablehlo-coreml #110 (M4)

def _mlp(n, kind):
    def fn():
        p = Prog("CoreML8")
        C = 256
        if kind == "conv":
            x = p.inp("x", "fp16", [1, C, 1, 64])
            for i in range(n):
                x = conv(p, "conv%d" % i, x, C, C, 1, [1, 64])
                x = unary(p, "relu", "relu%d" % i, x, [1, C, 1, 64])
            return p, [(x, "fp16", [1, C, 1, 64])], "%d-layer conv MLP" % n
        x = p.inp("x", "fp16", [64, C])
        for i in range(n):
            if kind == "linear":
                x = lin(p, "fc%d" % i, x, [64, C], C, C)
            else:
                x = matmul(p, "mm%d" % i, x, p.w([C, C]), [64, C])
            x = unary(p, "relu", "relu%d" % i, x, [64, C])
        return p, [(x, "fp16", [64, C])], "%d-layer %s MLP" % (n, kind)
    return fn


for _n, _kind in ((1, "linear"), (2, "linear"), (4, "linear"), (2, "conv"), (4, "conv"), (2, "matmul"),
                  (4, "matmul")):
    _u = "ane" if _n == 4 else "cpu"
    case("mlp%d_%s" % (_n, _kind), "stablehlo-small-graph-cpu", ["R3"], "a17", "macos15",
         "fp16 MLP as %s: 1-2 layers on the CPU, 4 layers on the ANE (MLComputePlan)" % _kind, _u,
         os_assumed=True)(_mlp(_n, _kind))


# R3 matmul reduction depth (larql #312, macOS 15 SDK) and 384 vs 512 (catalog L7, Vx #435, M4)

def _decode_linear(k, int8=False):
    def fn():
        p = Prog("CoreML8")
        x = p.inp("x", "fp16", [1, k])
        N = 256
        if int8:
            data = p._const(p.blob_value("int8", [N, k]), xtype("int8", [N, k]), "q")
            scale = p._const(p.blob_value("fp16", [N, 1]), xtype("fp16", [N, 1]), "s")
            w = p.op("constexpr_blockwise_shift_scale", [("data", data), ("scale", scale)], "w_int8",
                     "fp16", [N, k], count=False)
        else:
            w = p.w([N, k])
        p.op("linear", [("x", x), ("weight", w)], "proj", "fp16", [1, N])
        return p, [("proj", "fp16", [1, N])], "decode linear k=%d %s" % (k, "int8" if int8 else "fp16")
    return fn


for _k, _int8, _u in ((2048, False, "not_ane"), (4096, False, "not_ane"), (5120, False, "ane"),
                      (2048, True, "not_ane"), (4096, True, "ane")):
    case("decode_linear_k%d_%s" % (_k, "int8" if _int8 else "fp16"), "larql-matmul-reduction-depth",
         ["R3", "R8"] if _int8 else ["R3"], "a17", "macos15",
         "decode-shaped linear: preferred on the ANE from k ~4992 (fp16) / 4096 (int8), else off it",
         _u, chip_assumed=True)(_decode_linear(_k, _int8))


def _square_matmul(n):
    """fp32 model I/O cast to fp16, c = a @ b in fp16, cast back: the model Vx's dispatcher loads."""
    def fn():
        p = Prog("CoreML8")
        a, b = p.inp("a", "fp32", [n, n]), p.inp("b", "fp32", [n, n])
        a16 = cast(p, "a16", a, "fp16", [n, n])
        b16 = cast(p, "b16", b, "fp16", [n, n])
        m = matmul(p, "mm", a16, b16, [n, n])
        cast(p, "c", m, "fp32", [n, n])
        return p, [("c", "fp32", [n, n])], "fp32 I/O, fp16 matmul %dx%d" % (n, n)
    return fn


case("matmul_384", "catalog-L7-matmul-384-512", ["R3", "L7"], "a17", "macos26",
     "'in f16, CoreML picks the CPU at 384 and below' (MLComputePlan, every op)", "cpu",
     os_assumed=True, conf="exact")(_square_matmul(384))
case("matmul_512", "catalog-L7-matmul-384-512", ["R3", "L7", "R1"], "a17", "macos26",
     "512x512 f16: cast, cast, matmul, cast all preferred on the Neural Engine (MLComputePlan)", "ane",
     os_assumed=True, conf="exact")(_square_matmul(512))
case("matmul_4x4", "vx-436-matmul-4x4", ["R3", "L7"], "a17", "macos26",
     "4x4 matmul: cast, cast, matmul, cast all preferred on the CPU, also with CPU_AND_NE (MLComputePlan)",
     "cpu", os_assumed=True, conf="exact")(_square_matmul(4))


# R6 lstm with its glue (FluidAudio ANE_Profiler, M5): everything on the CPU

@case("lstm_prediction_net", "fa-lstm-no-ane-kernel", ["R6"], "a18", "macos26",
      "ios18.lstm plus its glue (gather, split/stack of h/c, squeeze, casts): preferred CPU per op", "cpu",
      conf="exact")
def _lstm_net():
    p = Prog("CoreML8")
    H, L = 64, 2  # hidden 640 in the report; the lstm op has no ANE kernel at any size
    t = p.inp("targets", "int32", [1, 1])
    h_in = p.inp("h_in", "fp32", [L, 1, H])
    c_in = p.inp("c_in", "fp32", [L, 1, H])
    emb = p.op("gather", [("x", p.w([128, H])), ("indices", t), ("axis", p.ci(0, True)),
                          ("batch_dims", p.ci(0, True)), ("validate_indices", p.cb(False))],
               "embedding", "fp16", [1, 1, H])
    x = transpose(p, "emb_t", emb, [1, 0, 2], [1, 1, H])
    hs, cs = [], []
    for nm, src, out in (("h", h_in, hs), ("c", c_in, cs)):
        s16 = cast(p, nm + "_in16", src, "fp16", [L, 1, H])
        parts = ["%s_split_%d" % (nm, i) for i in range(L)]
        p.op("split", [("x", s16), ("num_splits", p.ci(L, True)), ("axis", p.ci(0, True))], parts[0], "fp16",
             [1, 1, H], outs=[(q, "fp16", [1, 1, H]) for q in parts[1:]])
        for i in range(L):
            out.append(p.op("squeeze", [("x", parts[i]), ("axes", p.ci([0]))], "%s_sq_%d" % (nm, i), "fp16",
                            [1, H]))
    hn, cn = [], []
    for i in range(L):
        ins = [("x", x), ("initial_h", hs[i]), ("initial_c", cs[i]), ("weight_ih", p.w([4 * H, H])),
               ("weight_hh", p.w([4 * H, H])), ("bias", p.w([4 * H])), ("direction", p.cs("forward")),
               ("output_sequence", p.cb(True)), ("recurrent_activation", p.cs("sigmoid")),
               ("cell_activation", p.cs("tanh")), ("activation", p.cs("tanh"))]
        x = p.op("lstm", ins, "lstm%d_y" % i, "fp16", [1, 1, H],
                 outs=[("lstm%d_h" % i, "fp16", [1, H]), ("lstm%d_c" % i, "fp16", [1, H])])
        hn.append("lstm%d_h" % i)
        cn.append("lstm%d_c" % i)
    hst = p.op("stack", [("values", hn), ("axis", p.ci(0, True))], "h_stack", "fp16", [L, 1, H])
    cst = p.op("stack", [("values", cn), ("axis", p.ci(0, True))], "c_stack", "fp16", [L, 1, H])
    cast(p, "decoder_out", x, "fp32", [1, 1, H])
    cast(p, "h_out", hst, "fp32", [L, 1, H])
    cast(p, "c_out", cst, "fp32", [L, 1, H])
    return p, [("decoder_out", "fp32", [1, 1, H]), ("h_out", "fp32", [L, 1, H]),
               ("c_out", "fp32", [L, 1, H])], "RNNT prediction net: gather + 2-layer lstm"


# R1 + R6: Kokoro compute precision fp32 vs fp16 (M4 Max)

def _kokoro(dtype):
    def fn():
        p = Prog("CoreML8")
        C, T = 512, 1024  # the generator of an 82M-parameter TTS model, not a toy: 3.2 GFLOP of convs
        x = p.inp("x", dtype, [1, C, 1, T])
        y = conv(p, "gen_conv1", x, C, C, 3, [1, T], dtype=dtype)
        y = unary(p, "leaky_relu", "gen_act", y, [1, C, 1, T], dtype)
        y = conv(p, "gen_conv2", y, C, C, 3, [1, T], dtype=dtype)
        s = reshape(p, "dur_in", y, [1, C, T], dtype)
        s = transpose(p, "dur_seq", s, [2, 0, 1], [T, 1, C], dtype)
        H = 64
        ins = [("x", s), ("initial_h", p.w([1, H], dtype)), ("initial_c", p.w([1, H], dtype)),
               ("weight_ih", p.w([4 * H, C], dtype)), ("weight_hh", p.w([4 * H, H], dtype)),
               ("bias", p.w([4 * H], dtype)), ("direction", p.cs("forward")), ("output_sequence", p.cb(True)),
               ("recurrent_activation", p.cs("sigmoid")), ("cell_activation", p.cs("tanh")),
               ("activation", p.cs("tanh"))]
        p.op("lstm", ins, "dur_lstm", dtype, [T, 1, H], outs=[("dur_lstm_h", dtype, [1, H]),
                                                               ("dur_lstm_c", dtype, [1, H])])
        return p, [("gen_conv2", dtype, [1, C, 1, T]), ("dur_lstm", dtype, [T, 1, H])], \
            "Kokoro-like generator convs + duration lstm, %s" % dtype
    return fn


case("kokoro_fp32", "fa-kokoro-fp32-vs-fp16-lstm", ["R1", "R6"], "a17", "macos26",
     "compute_precision FLOAT32: none of the 833 ops the fp16 build moved to the ANE is on it (the fp32 "
     "baseline ran with cpuAndGPU, so only not_ane is known)", "not_ane",
     os_assumed=True)(_kokoro("fp32"))
case("kokoro_fp16", "fa-kokoro-fp32-vs-fp16-lstm", ["R1", "R6"], "a17", "macos26",
     "compute_precision FLOAT16 (.all): 833 ops (BERT layers, generator convs) move to the ANE; the 6 lstm ops "
     "stay on the CPU; the reshape/transpose feeding the lstm are not reported. Scaled: the generator convs "
     "are 512 channels over 1024 frames (3.2 GFLOP), the order of the 833 ops the report moved", "ane",
     {"dur_in": "unknown", "dur_seq": "unknown", "dur_lstm": "cpu"}, os_assumed=True)(_kokoro("fp16"))


# R1: fp32 causal mask added into fp16 scores (smpanaro, M1 Pro, macOS 13)

def _mask(dtype):
    def fn():
        p = Prog(OPSET_FOR_CASE[0])
        S, H, D = 512, 12, 64
        q, k, v = (p.inp(n, "fp16", [1, H, S, D]) for n in ("q", "k", "v"))
        m = p.inp("mask", dtype, [1, 1, S, S])
        s = matmul(p, "scores", q, k, [1, H, S, S], ty=True)
        if dtype == "fp32":
            s32 = cast(p, "scores_fp32", s, "fp32", [1, H, S, S])
            a = binary(p, "add", "masked_fp32", s32, m, [1, H, S, S], "fp32")
            s = cast(p, "masked", a, "fp16", [1, H, S, S])
        else:
            s = binary(p, "add", "masked", s, m, [1, H, S, S])
        a = softmax(p, "attn", s, [1, H, S, S])
        matmul(p, "ctx", a, v, [1, H, S, D])
        return p, [("ctx", "fp16", [1, H, S, D])], "attention with a %s mask" % dtype
    return fn


case("attn_mask_fp32", "smpanaro-fp32-mask", ["R1"], "a14", "macos13",
     "mask kept in fp32: the fp32 ops (cast, add) run on the CPU (Xcode report op counts)", "ane",
     {"scores_fp32": "cpu", "masked_fp32": "cpu", "masked": "cpu"})(_mask("fp32"))
case("attn_mask_fp16", "smpanaro-fp32-mask", ["R1"], "a14", "macos13",
     "the same mask in fp16: the attention stays on the ANE", "ane")(_mask("fp16"))


# R6 band_part at the start of a chunk (smpanaro, M1 Pro, macOS 13)

@case("band_part_mask", "smpanaro-band-part", ["R6"], "a14", "macos13",
      "matrix_band_part at the start of a chunk 'is not able to run on ANE'; the rest of the chunk ran on the ANE "
      "in chunk 1 and on the CPU in chunks 3 and 4: not counted", "unknown", {"causal": "cpu"})
def _band_part():
    p = Prog(OPSET_FOR_CASE[0])
    S, H, D = 512, 12, 64
    q, k, v = (p.inp(n, "fp16", [1, H, S, D]) for n in ("q", "k", "v"))
    bias = p.inp("bias", "fp16", [1, 1, S, S])
    m = p.op("band_part", [("x", bias), ("lower", p.ci(-1, True)), ("upper", p.ci(0, True))], "causal", "fp16",
             [1, 1, S, S])
    s = matmul(p, "scores", q, k, [1, H, S, S], ty=True)
    s = binary(p, "add", "masked", s, m, [1, H, S, S])
    a = softmax(p, "attn", s, [1, H, S, S])
    matmul(p, "ctx", a, v, [1, H, S, D])
    return p, [("ctx", "fp16", [1, H, S, D])], "band_part causal mask + attention"


# R6 cond (smpanaro, M1 Pro / M2 Air, macOS 13)

@case("cond_kv_path", "smpanaro-cond-not-ane", ["R6"], "a14", "macos13",
      "'cond (if/else) isn't supported on the Neural Engine ... you have to go back to CPU to take the branch'; "
      "the other ops are not reported", "unknown", {"kv_select": "cpu"})
def _cond():
    p = Prog(OPSET_FOR_CASE[0])
    x = p.inp("x", "fp16", [1, 12, 64, 64])
    flag = p.inp("use_cache", "fp16", [1])
    pred = p.op("greater", [("x", flag), ("y", p.ch(0.5))], "pred", "bool", [1])
    pred = p.op("squeeze", [("x", pred)], "pred_scalar", "bool", [])
    p.begin_block()
    a = unary(p, "relu", "cached_path", x, [1, 12, 64, 64])
    b1 = p.end_block([a])
    p.begin_block()
    b = binary(p, "mul", "fresh_path", x, p.ch(0.5), [1, 12, 64, 64])
    b2 = p.end_block([b])
    # the cond op is listed before the ops of its blocks: insert its node first
    n_before = len(p.nodes)
    p.op("cond", [("pred", pred)], "kv_select", "fp16", [1, 12, 64, 64], blocks=[b1, b2])
    node = p.nodes.pop()
    p.nodes.insert(n_before - 2, node)
    return p, [("kv_select", "fp16", [1, 12, 64, 64])], "cond between two KV paths"


# R6 while_loop (coremltools #2208, iOS 17 opset)

@case("while_loop_matmul", "ct2208-while-loop", ["R6"], "a14", "macos14",
      "while_loop with an int32 counter and a matmul + sigmoid body: no success running it on the ANE, nor "
      "the GPU (the issue's repro, rebuilt op for op)", "cpu",
      chip_assumed=True, os_assumed=True)
def _while():
    """The issue's repro: q (4,128,512) fp16, k (512,512) fp16 and the loop count l (1,) int32 are
    inputs; the counter starts from fill; cond less(i, l); body matmul(state, k), sigmoid, i + 1."""
    p = Prog("CoreML7")
    q = p.inp("q", "fp16", [4, 128, 512])
    kk = p.inp("k", "fp16", [512, 512])
    lim = p.inp("l", "int32", [1])
    i0 = p.op("fill", [("shape", p.ci([1])), ("value", p.ci(0, True))], "counter0", "int32", [1])
    p.begin_block()
    c = p.op("less", [("x", "i_c"), ("y", lim)], "keep_going", "bool", [1])
    cb = p.end_block([c], inputs=[("i_c", "int32", [1]), ("x_c", "fp16", [4, 128, 512])])
    p.begin_block()
    m = matmul(p, "body_matmul", "x_b", kk, [4, 128, 512])
    s_ = unary(p, "sigmoid", "body_sigmoid", m, [4, 128, 512])
    n = p.op("add", [("x", "i_b"), ("y", p.ci([1]))], "counter_next", "int32", [1])
    bb = p.end_block([n, s_], inputs=[("i_b", "int32", [1]), ("x_b", "fp16", [4, 128, 512])])
    k = len(p.nodes)
    p.op("while_loop", [("loop_vars", [i0, q])], "loop_i", "int32", [1],
         outs=[("loop_x", "fp16", [4, 128, 512])], blocks=[cb, bb])
    p.nodes.insert(k - 4, p.nodes.pop())
    return p, [("loop_i", "int32", [1]), ("loop_x", "fp16", [4, 128, 512])], \
        "while_loop: fill counter, less, matmul + sigmoid body"


# R6 gather embedding (CoreMLInspect, macOS 14.4+ MLComputePlan)

@case("gather_embedding", "coremlinspect-gather-no-ane", ["R6"], "a14", "macos14",
      "README's MLComputePlan dump (compute unit all): gather 'G|C' (primary GPU, ANE not supported); the "
      "following ios16.mul of it by itself 'G|CN' (primary GPU)", "gpu", chip_assumed=True, os_assumed=True,
      conf="exact")
def _gather():
    p = Prog("CoreML7")
    ids = p.inp("input_ids", "int32", [1, 64])
    e = p.op("gather", [("x", p.w([1024, 768])), ("indices", ids), ("axis", p.ci(0, True)),
                        ("batch_dims", p.ci(0, True)), ("validate_indices", p.cb(False))], "wte", "fp16",
             [1, 64, 768])
    binary(p, "mul", "emb_scaled", e, e, [1, 64, 768])
    return p, [("emb_scaled", "fp16", [1, 64, 768])], "embedding gather + mul"


# R6 int position handling in an LLM chunk (Anemll ANE_PROFILER, macOS 15+)

@case("int_position_glue", "anemll-gemma-ffn-fallback", ["R6", "R8"], "a17", "macos15",
      "ios18.cast to int16 of current_pos, greater_equal, select, gather: GPU; the LUT4 palettized FFN: ANE",
      "gpu", {"ffn_up": "ane", "ffn_act": "ane", "ffn_down": "ane", "ffn_res": "ane"}, chip_assumed=True,
      os_assumed=True, conf="exact")  # "macOS 15+": the lowest release the profiler runs on
def _anemll():
    p = Prog("CoreML8")
    C, S = 1024, 64
    pos = p.inp("current_pos", "int32", [1])
    h = p.inp("hidden", "fp16", [1, S, C])
    pos16 = cast(p, "pos_int16", pos, "int16", [1])
    ar = p._const(v_ints(list(range(S)), [S]), ttype("int32", [S]))
    # the comparison in int32: greater_equal takes fp16, fp32 or int32 on every opset (coremltools
    # 8.3's op definitions; Core ML's loader and anelint's check refuse int16 there); the int16
    # position is the gather's index, which takes int16 from iOS 16
    ge = p.op("greater_equal", [("x", ar), ("y", pos)], "future", "bool", [S])
    sel = p.op("select", [("cond", ge), ("a", p.ch(-30000.0)), ("b", p.ch(0.0))], "mask_row", "fp16", [S])
    p.op("gather", [("x", h), ("indices", pos16), ("axis", p.ci(1, True)), ("batch_dims", p.ci(0, True)),
                    ("validate_indices", p.cb(False))], "current_hidden", "fp16", [1, 1, C])

    def lut4(dims, nm):
        idx = p._const(p.blob_value("uint4", dims), xtype("uint4", dims), nm + "_idx")
        lut = p._const(p.blob_value("fp16", [1, 1, 16, 1]), xtype("fp16", [1, 1, 16, 1]), nm + "_lut")
        return p.op("constexpr_lut_to_dense", [("indices", idx), ("lut", lut)], nm, "fp16", dims, count=False)
    u = p.op("linear", [("x", h), ("weight", lut4([2 * C, C], "w_up"))], "ffn_up", "fp16", [1, S, 2 * C])
    u = p.op("gelu", [("x", u), ("mode", p.cs("TANH_APPROXIMATION"))], "ffn_act", "fp16", [1, S, 2 * C])
    d = p.op("linear", [("x", u), ("weight", lut4([C, 2 * C], "w_down"))], "ffn_down", "fp16", [1, S, C])
    binary(p, "add", "ffn_res", h, d, [1, S, C])
    return p, [("ffn_res", "fp16", [1, S, C]), ("mask_row", "fp16", [S]), ("current_hidden", "fp16", [1, 1, C])], \
        "int16 position glue + LUT4 FFN"


# R5 rank-5 KV cache updated by scatter vs a rank-4 split-KV rewrite (FluidAudio #679)

@case("kv_rank5_scatter", "fa-rank5-kv-scatter", ["R5", "R7"], "a18", "macos26",
      "rank-5 KV-cache scatter 'rejected by the ANE compiler at any precision'; flowlm/cond run on the GPU "
      "(split inferred from the runtime config, so counted as not_ane)", "not_ane",
      chip_assumed=True)
def _rank5():
    p = Prog("CoreML8")
    kv = p.inp("kv_cache", "fp16", [2, 1, 8, 256, 64])
    new = p.inp("kv_new", "fp16", [2, 1, 8, 1, 64])
    q = p.inp("q", "fp16", [1, 8, 1, 64])
    idx = p.inp("position", "int32", [1])
    kv2 = p.op("scatter", [("data", kv), ("indices", idx), ("updates", new), ("axis", p.ci(3, True)),
                           ("mode", p.cs("update")), ("validate_indices", p.cb(False))], "kv_updated", "fp16",
               [2, 1, 8, 256, 64])
    k = p.op("slice_by_index", [("x", kv2), ("begin", p.ci([0, 0, 0, 0, 0])), ("end", p.ci([1, 1, 8, 256, 64])),
                                ("squeeze_mask", p.cbv([1, 0, 0, 0, 0]))],
             "k_all", "fp16", [1, 8, 256, 64])
    s = matmul(p, "scores", q, k, [1, 8, 1, 256], ty=True)
    softmax(p, "attn", s, [1, 8, 1, 256])
    return p, [("attn", "fp16", [1, 8, 1, 256]), ("kv_updated", "fp16", [2, 1, 8, 256, 64])], "rank-5 KV scatter"


@case("kv_rank4_scatter", "mobius-67-rank4-scatter", ["R5", "R6"], "a18", "macos26",
      "PocketTTS v2.1 conversion notes: 'rank-4 split also fails (scatter, not rank)': the KV scatter is "
      "rejected by the ANE compiler at any precision, so the graph runs off the ANE", "not_ane",
      chip_assumed=True)
def _rank4_scatter():
    p = Prog("CoreML8")
    kv = p.inp("k_cache", "fp16", [1, 8, 256, 64])
    new = p.inp("k_new", "fp16", [1, 8, 1, 64])
    q = p.inp("q", "fp16", [1, 8, 1, 64])
    idx = p.inp("position", "int32", [1])
    k = p.op("scatter", [("data", kv), ("indices", idx), ("updates", new), ("axis", p.ci(2, True)),
                         ("mode", p.cs("update")), ("validate_indices", p.cb(False))], "k_updated", "fp16",
             [1, 8, 256, 64])
    s = matmul(p, "scores", q, k, [1, 8, 1, 256], ty=True)
    softmax(p, "attn", s, [1, 8, 1, 256])
    return p, [("attn", "fp16", [1, 8, 1, 256]), ("k_updated", "fp16", [1, 8, 256, 64])], "rank-4 KV scatter"


@case("kv_rank4_split", "fa-rank5-kv-scatter", ["R5"], "a18", "macos26",
      "the rank-4 split-KV rewrite without scatter: flowlm 100% on the ANE (MLComputePlan)", "ane",
      chip_assumed=True)
def _rank4():
    p = Prog("CoreML8")
    k_cache = p.inp("k_cache", "fp16", [1, 8, 255, 64])
    k_new = p.inp("k_new", "fp16", [1, 8, 1, 64])
    q = p.inp("q", "fp16", [1, 8, 1, 64])
    k = p.op("concat", [("values", [k_cache, k_new]), ("axis", p.ci(2, True)), ("interleave", p.cb(False))],
             "k_all", "fp16", [1, 8, 256, 64])
    s = matmul(p, "scores", q, k, [1, 8, 1, 256], ty=True)
    softmax(p, "attn", s, [1, 8, 1, 256])
    return p, [("attn", "fp16", [1, 8, 1, 256]), ("k_all", "fp16", [1, 8, 256, 64])], "rank-4 split KV"


# R7 stateful KV caches

def _stateful(S, C, H, D, ctx, proj, nm):
    """x [1,S,C] (or [1,C,1,S] for conv projections) -> k projection to H*D -> heads ->
    slice_update into the MLState KV cache [1,H,ctx,D] -> attention scores over the cache."""
    def fn():
        p = Prog("CoreML8")
        x = p.inp("x", "fp16", [1, C, 1, S] if proj == "conv" else [1, S, C])
        kst = p.state("k_cache", [1, H, ctx, D])
        if proj == "conv":
            k = conv(p, "k_proj", x, C, H * D, 1, [1, S])
            k = reshape(p, "k_heads", k, [1, H, D, S])
            k = transpose(p, "k_t", k, [0, 1, 3, 2], [1, H, S, D])
        else:
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
        return p, [("attn", "fp16", [1, H, S, ctx])], nm
    return fn


case("state_kv_decode", "mobius-stateful-kv-decode-rejected", ["R7"], "a18", "macos26",
     "decode graph with MLState KV mutated in-graph (slice_update): CPU_AND_NE -> 'ANE REJECTED, ANECCompile -14'; "
     "it ran on the GPU only with CPU_AND_GPU, so counted as not_ane", "not_ane",
     conf="exact")(_stateful(1, 1024, 8, 128, 512, "linear", "stateful KV decode (Qwen3-0.6B shapes)"))


@case("stateless_prefill_seq128", "mobius-stateful-kv-decode-rejected", ["R7"], "a18", "macos26",
      "stateless prefill graph seq=128: 1918/1919 ops on the ANE (MLComputePlan)", "ane", conf="exact")
def _prefill():
    p = Prog("CoreML8")
    x = p.inp("x", "fp16", [1, 128, 256])
    attention_block(p, x, 128, 256, 4)
    return p, [("res2", "fp16", [1, 128, 256])], "stateless prefill block, seq 128"


case("state_kv_seq128_linear", "ct2553-stateful-kv-seqlen", ["R7"], "a17", "macos15",
     "MLState KV cache + slice_update, SEQ_LEN 128, Linear projections: fails on the ANE (CPU, GPU fine)",
     "not_ane", chip_assumed=True, os_assumed=True)(_stateful(128, 1024, 16, 128, 1024, "linear",
                                                                           "stateful KV seq 128"))
case("state_kv_seq16_conv", "ct2553-stateful-kv-seqlen", ["R7"], "a17", "macos15",
     "Anemll variant: Conv2d projections, SEQ 16, head_dim 32: runs on the ANE", "ane", chip_assumed=True,
     os_assumed=True)(_stateful(16, 1024, 32, 32, 1024, "conv", "stateful KV seq 16, conv projections"))
case("state_kv_seq32_conv", "ct2553-stateful-kv-seqlen", ["R7"], "a17", "macos15",
     "Anemll variant: Conv2d projections, SEQ 32, head_dim 32: runs on the ANE", "ane", chip_assumed=True,
     os_assumed=True)(_stateful(32, 1024, 32, 32, 1024, "conv", "stateful KV seq 32, conv projections"))


def _conv_rnn(W):
    def fn():
        p = Prog("CoreML8")
        C, H = 16, 64
        x = p.inp("x", "fp16", [1, 3, H, W])
        st = p.state("hidden", [1, C, H, W])
        h = p.op("read_state", [("input", st)], "h_read", "fp16", [1, C, H, W])
        cat = p.op("concat", [("values", [x, h]), ("axis", p.ci(1, True)), ("interleave", p.cb(False))],
                   "xh", "fp16", [1, 3 + C, H, W])
        y = conv(p, "cell_conv", cat, 3 + C, C, 3, [H, W])
        y = unary(p, "tanh", "cell_tanh", y, [1, C, H, W])
        p.op("write_state", [("input", st), ("data", y)], "h_write", "fp16", [1, C, H, W])
        return p, [("cell_tanh", "fp16", [1, C, H, W])], "stateful conv RNN, state width %d" % W
    return fn


case("state_width270", "ct2631-state-width-mult32", ["R7"], "a17", "macos15",
     "state tensor width 270: ANE and All compute units fail (Xcode performance tab)", "not_ane")(_conv_rnn(270))
case("state_width256", "ct2631-state-width-mult32", ["R7"], "a17", "macos15",
     "state tensor width 256: works on the ANE", "ane")(_conv_rnn(256))


# R4 W = 240000 waveform (smdesai parakeet: A15 load error; M4 stays CPU/GPU)

def _waveform():
    p = Prog("CoreML8")
    x = p.inp("audio", "fp16", [1, 1, 1, 240000])
    w = p.w([128, 1, 1, 400])
    f = p.op("conv", [("x", x), ("weight", w), ("strides", p.ci([1, 160])), ("pad_type", p.cs("valid")),
                      ("pad", p.ci([0, 0, 0, 0])), ("dilations", p.ci([1, 1])), ("groups", p.ci(1, True))],
             "stft_frames", "fp16", [1, 128, 1, 1498])
    unary(p, "square", "power", f, [1, 128, 1, 1498])
    return p, [("power", "fp16", [1, 128, 1, 1498])], "raw waveform [1,240000] framing conv"


case("waveform_w240000_a15", "smdesai-w240000-dim-cap", ["R4"], "a15", "ios18",
     "any ANE partition that sees W=240000 fails to load on the iPhone 13 (A15): CPU/GPU", "gpu_or_cpu",
     os_assumed=True, conf="exact")(_waveform)
case("waveform_w240000_m4", "smdesai-w240000-dim-cap", ["R4"], "a17", "macos15",
     "the same fused preprocessor on an M4 Mac stays on the CPU/GPU", "gpu_or_cpu", os_assumed=True)(_waveform)


# R4 / R3 LM heads

def _lm_head(S, V, H, sliced):
    def fn():
        p = Prog(OPSET_FOR_CASE[0])
        x = p.inp("hidden", "fp16", [1, S, H])
        n = S
        if sliced:
            x = p.op("slice_by_index", [("x", x), ("begin", p.ci([0, S - 1, 0])), ("end", p.ci([1, S, H]))],
                     "last_token", "fp16", [1, 1, H])
            n = 1
        lin(p, "lm_head", x, [1, n, H], H, V)
        return p, [("lm_head", "fp16", [1, n, V])], "LM head %d -> %d over %d positions" % (H, V, n)
    return fn


case("lm_head_512_positions", "smpanaro-lm-head-cpu", ["R3", "R4"], "a14", "macos13",
     "LM head to vocab 50257 over all 512 positions (512x50257 output): on the CPU (BNNS inner products)",
     "cpu")(_lm_head(512, 50257, 16, False))
case("lm_head_last_position", "smpanaro-lm-head-cpu", ["R3", "R4"], "a14", "macos13",
     "the same head applied only to the selected next-token position: on the ANE", "ane")(
         _lm_head(512, 50257, 16, True))
case("lm_head_vocab128256", "et8445-final-linear-cpu", ["R4"], "a16", "ios18",
     "static Llama final linear (LM head, vocab 128256 > 65536): on the CPU (.mlperf per-op)", "cpu",
     os_assumed=True)(_lm_head(1, 128256, 8, False))


# R2 flexible shapes

@case("enum_only_concat_slice", "smpanaro-enum-plus-range", ["R2"], "a14", "macos13",
      "tokens fixed, KV cache length enumerated: 'the concat then slice doesn't work on ANE with enumerated shapes'",
      "not_ane", chip_assumed=False)
def _enum_only():
    p = Prog(OPSET_FOR_CASE[0])
    H, D = 12, 64
    kv = p.inp("kv_cache", "fp16", [1, H, 256, D], enum=[[1, H, 256, D], [1, H, 512, D]])
    x = p.inp("new_kv", "fp16", [1, H, 128, D])
    c = p.op("concat", [("values", [kv, x]), ("axis", p.ci(2, True)), ("interleave", p.cb(False))], "kv_all",
             "fp16", [1, H, 384, D])
    p.op("slice_by_index", [("x", c), ("begin", p.ci([0, 0, 128, 0])), ("end", p.ci([1, H, 384, D]))],
         "kv_window", "fp16", [1, H, 256, D])
    return p, [("kv_window", "fp16", [1, H, 256, D])], "enumerated KV cache, concat + slice"


@case("enum_plus_range", "smpanaro-enum-plus-range", ["R2"], "a14", "macos13",
      "one input with EnumeratedShapes (KV length) and one with RangeDim (tokens): 'works on CPU but not NE'",
      "cpu")
def _enum_range():
    p = Prog(OPSET_FOR_CASE[0])
    H, D = 12, 64
    kv = p.inp("kv_cache", "fp16", [1, H, 128, D], enum=[[1, H, 128, D], [1, H, 256, D], [1, H, 512, D]])
    x = p.inp("new_kv", "fp16", [1, H, None, D], rng=[(1, 1), (H, H), (1, 64), (D, D)])
    c = p.op("concat", [("values", [kv, x]), ("axis", p.ci(2, True)), ("interleave", p.cb(False))], "kv_all",
             "fp16", [1, H, None, D])
    p.op("slice_by_index", [("x", c), ("begin", p.ci([0, 0, 1, 0])), ("end", p.ci([1, H, 0, D])),
                            ("end_mask", p.cbv([1, 1, 1, 1]))],
         "kv_shifted", "fp16", [1, H, None, D])
    return p, [("kv_shifted", "fp16", [1, H, None, D])], "enumerated + range inputs, concat + slice"


def _estimator(flex):
    def fn():
        p = Prog("CoreML8")
        C = 256
        if flex:
            x = p.inp("x", "fp16", [1, None, C], rng=[(1, 1), (16, 1024), (C, C)])
            S = None
        else:
            x = p.inp("x", "fp16", [1, 128, C])
            S = 128
        attention_block(p, x, S, C, 4, wdtype="fp16" if flex else "lut4")
        return p, [("res2", "fp16", [1, S, C])], "diffusion vector-estimator block, %s" % (
            "RangeDim sequence, fp16" if flex else "fixed L=128, int4 palettized")
    return fn


case("estimator_rangedim", "fa-rangedim-vs-fixed-buckets", ["R2"], "a18", "macos26",
     "RangeDim sequence length (fp16 build): the estimator runs on the CPU (MLComputePlan)", "cpu",
     conf="exact")(_estimator(True))
case("estimator_fixed_L128", "fa-rangedim-vs-fixed-buckets", ["R2"], "a18", "macos26",
     "the same network at fixed L=128: 94% of 679 ops on the ANE (MLComputePlan)", "ane",
     conf="exact")(_estimator(False))


def _cohere(flex):
    def fn():
        p = Prog("CoreML8")
        # Scaled: a decoder step of the report's model reads all of its decoder's weights (far
        # above the work floor); one 2048-wide q projection (8.4 MB) stands for them
        C, S, H, D = 2048, 108, 16, 128
        x = p.inp("x", "fp16", [1, 1, C])
        if flex:
            m = p.inp("attention_mask", "fp16", [1, 1, 1, None], rng=[(1, 1), (1, 1), (1, 1), (1, 108)])
            L = None
        else:
            m = p.inp("attention_mask", "fp16", [1, 1, 1, S])
            L = S
        kc = p.inp("k_cache", "fp16", [1, H, L, D])
        q = lin(p, "q", x, [1, 1, C], C, C)
        q = reshape(p, "q_heads", q, [1, 1, H, D])
        q = transpose(p, "q_t", q, [0, 2, 1, 3], [1, H, 1, D])
        s = matmul(p, "scores", q, kc, [1, H, 1, L], ty=True)
        s = binary(p, "add", "masked", s, m, [1, H, 1, L])
        softmax(p, "attn", s, [1, H, 1, L])
        return p, [("attn", "fp16", [1, H, 1, L])], "decoder step with a %s attention mask" % (
            "RangeDim(1,108)" if flex else "fixed [1,1,1,108]")
    return fn


case("decoder_mask_rangedim", "fa-cohere-rangedim-mask", ["R2"], "a18", "macos26",
     "attention_mask declared RangeDim(1,108): the decoder leaves the ANE (statement + timing). Scaled as "
     "decoder_mask_fixed", "gpu_or_cpu",
     chip_assumed=True, os_assumed=True)(_cohere(True))
case("decoder_mask_fixed", "fa-cohere-rangedim-mask", ["R2"], "a18", "macos26",
     "fixed [1,1,1,108] mask with a position input: runs on the ANE (statement + timing). Scaled: the "
     "step's q projection is 2048 wide (8.4 MB) to stand for the decoder weights each step reads", "ane",
     chip_assumed=True, os_assumed=True)(_cohere(False))


def _ct1764(flex):
    def fn():
        nn = NN()
        rng = [(1, 16), (64, 64), (32, 32)] if flex else None
        nn.add("conv1", ["x"], 100, nn_conv(64, 64, 3), "convolution")
        nn.add("relu1", ["conv1"], 130, RELU, "activation")
        nn.add("conv2", ["relu1"], 100, nn_conv(64, 64, 3), "convolution")
        nn.add("relu2", ["conv2"], 130, RELU, "activation")
        return nn, [nn_feature("x", [1, 64, 32], rng)], ["relu2"], "conv net, %s input" % (
            "flexible (default 1)" if flex else "fixed")
    return fn


case("nn_flexible_default1", "ct1764-flexible-shape-cpu", ["R2"], "a14", "macos13",
     "flexible input shape, default 1: 'doesn't use the ANE at all, and only runs on CPU' (Xcode report)", "cpu",
     chip_assumed=True, os_assumed=True)(_ct1764(True))
case("nn_fixed_1", "ct1764-flexible-shape-cpu", ["R2"], "a14", "macos13",
     "the same model fixed to 1 'uses the GPU / ANE': which ops on which is not stated, so none is counted",
     "unknown", chip_assumed=True, os_assumed=True)(_ct1764(False))


# R8 compressed weights

def _quant_linear(kind, C=1024, S=64):
    def fn():
        p = Prog("CoreML8")
        x = p.inp("x", "fp16", [1, S, C])
        if kind == "per_block_int4":
            d = p._const(p.blob_value("int4", [C, C]), xtype("int4", [C, C]), "q")
            s = p._const(p.blob_value("fp16", [C, C // 32]), xtype("fp16", [C, C // 32]), "s")
            w = p.op("constexpr_blockwise_shift_scale", [("data", d), ("scale", s)], "w_dq", "fp16", [C, C],
                     count=False)
        elif kind == "per_channel_int4":
            d = p._const(p.blob_value("int4", [C, C]), xtype("int4", [C, C]), "q")
            s = p._const(p.blob_value("fp16", [C, 1]), xtype("fp16", [C, 1]), "s")
            w = p.op("constexpr_blockwise_shift_scale", [("data", d), ("scale", s)], "w_dq", "fp16", [C, C],
                     count=False)
        elif kind == "per_channel_int8":
            d = p._const(p.blob_value("int8", [C, C]), xtype("int8", [C, C]), "q")
            s = p._const(p.blob_value("fp16", [C, 1]), xtype("fp16", [C, 1]), "s")
            w = p.op("constexpr_blockwise_shift_scale", [("data", d), ("scale", s)], "w_dq", "fp16", [C, C],
                     count=False)
        elif kind in ("pal6", "pal4_scale"):
            bits = "uint6" if kind == "pal6" else "uint4"
            idx = p._const(p.blob_value(bits, [C, C]), xtype(bits, [C, C]), "idx")
            n = 64 if kind == "pal6" else 16
            lut = p._const(p.blob_value("fp16", [1, 1, n, 1]), xtype("fp16", [1, 1, n, 1]), "lut")
            w = p.op("constexpr_lut_to_dense", [("indices", idx), ("lut", lut)], "w_pal", "fp16", [C, C],
                     count=False)
            if kind == "pal4_scale":
                s = p._const(p.blob_value("fp16", [C, 1]), xtype("fp16", [C, 1]), "s")
                w = p.op("constexpr_blockwise_shift_scale", [("data", w), ("scale", s)], "w_dq", "fp16", [C, C],
                         count=False)
        y = p.op("linear", [("x", x), ("weight", w)], "proj", "fp16", [1, S, C])
        unary(p, "relu", "act", y, [1, S, C])
        return p, [("act", "fp16", [1, S, C])], "linear with %s weights" % kind
    return fn


case("quant_per_block_int4", "ct2510-per-block-quant", ["R8"], "a17", "macos15",
     "int4 per_block (constexpr_blockwise_shift_scale): refused by the ANE, the consumer runs on the CPU", "cpu",
     {"act": "unknown"}, chip_assumed=True, os_assumed=True, conf="exact")(_quant_linear("per_block_int4"))
case("quant_per_channel_int8_m5", "fa-int8-encoder-ane", ["R8"], "a18", "macos26",
     "int8 weight-quantized encoder: all on the ANE (MLComputePlan per-op tally). Scaled: the report's encoder "
     "holds 568 MB of int8 weights, so one 4096x4096 int8 linear (16 MB, 2.1 GFLOP) stands for it instead of "
     "a 1024-wide one far below the work floor", "ane",
     conf="exact")(_quant_linear("per_channel_int8", C=4096))
case("quant_int8_constexpr_m4", "stablehlo-quant-constexpr-cpu", ["R8"], "a17", "ios18",
     "linear whose weight is an int8 constexpr: 'supported=[CPU]' from MLComputePlan, never on the ANE at any "
     "depth, also with an iOS 26 target (granularity not stated; rebuilt per-channel)", "cpu",
     {"act": "unknown"}, conf="exact")(_quant_linear("per_channel_int8"))
case("quant_int4_constexpr_m4", "stablehlo-quant-constexpr-cpu", ["R8"], "a17", "ios18",
     "linear whose weight is an int4 constexpr: 'supported=[CPU]' from MLComputePlan, never on the ANE at any "
     "depth, also with an iOS 26 target (rebuilt per-channel)", "cpu", {"act": "unknown"},
     conf="exact")(_quant_linear("per_channel_int4"))
case("palettized_6bit", "gigastt-fixed-shape-palettized", ["R8", "R2"], "a14", "macos26",
     "fixed-shape 6-bit palettized encoder: resident on the ANE (MLComputePlan). Scaled: a whole speech "
     "encoder, rebuilt as one 4096x4096 6-bit linear (12.6 MB, 2.1 GFLOP) to carry an encoder's order of "
     "work", "ane", os_assumed=True,
     conf="exact")(_quant_linear("pal6", C=4096))
case("palettized_per_channel_scale", "ct-pr2688-palettize-per-channel-scale", ["R8"], "a18", "macos26",
     "lut_to_dense wrapped by a per-channel blockwise_shift_scale: fails to load on the ANE path", "not_ane",
     {"act": "unknown"}, chip_assumed=True)(_quant_linear("pal4_scale"))


# R1 fp32 chains

@case("fp32_source_generator", "fa-kokoro-istft-sourcegen", ["R1"], "a18", "macos26",
      "harmonic source generator kept in fp32 (sin, exp chain): operationsSupportingANE=0, preferred GPU", "gpu")
def _sourcegen():
    p = Prog("CoreML8")
    f0 = p.inp("f0", "fp32", [1, 9, 24000])
    ph = binary(p, "mul", "phase", f0, p.cf(6.2831855), [1, 9, 24000], "fp32")
    s = unary(p, "sin", "sine", ph, [1, 9, 24000], "fp32")
    e = unary(p, "exp", "envelope", f0, [1, 9, 24000], "fp32")
    m = binary(p, "mul", "harmonics", s, e, [1, 9, 24000], "fp32")
    p.op("reduce_sum", [("x", m), ("axes", p.ci([1])), ("keep_dims", p.cb(True))], "source", "fp32",
         [1, 1, 24000])
    return p, [("source", "fp32", [1, 1, 24000])], "fp32 sin/exp source generator"


@case("silu_fp32_island", "coreai-rule-silu-swish-fp32", ["R1"], "a18", "ios27",
      "silu lowered to cast(fp32) + swish(fp32) + cast(fp16): '3 invalid ops' off the ANE; the fp16 convs stay."
      "Scaled to a layer of a real model (T = 2048, 268 MFLOP per conv), which the rule is about",
      "ane", {"to_fp32": "not_ane", "silu_fp32": "not_ane", "to_fp16": "not_ane"}, chip_assumed=True)
def _silu():
    p = Prog("CoreML8")
    C, T = 256, 2048  # a layer of a real model (Apple's rule is about them): 268 MFLOP per conv
    x = p.inp("x", "fp16", [1, C, 1, T])
    y = conv(p, "conv_in", x, C, C, 1, [1, T])
    y = cast(p, "to_fp32", y, "fp32", [1, C, 1, T])
    y = unary(p, "silu", "silu_fp32", y, [1, C, 1, T], "fp32")
    y = cast(p, "to_fp16", y, "fp16", [1, C, 1, T])
    conv(p, "conv_out", y, C, C, 1, [1, T])
    return p, [("conv_out", "fp16", [1, C, 1, T])], "fp16 convs around an fp32 silu"


@case("fp32_exp_literal", "coreai-rule-fp32", ["R1"], "a18", "ios27",
      "an fp32 constant / fp32 exp in an fp16 graph: those ops leave the ANE; the fp16 conv stays."
      " Scaled to a layer of a real model (T = 2048, 268 MFLOP per conv), which the rule is about", "ane",
      {"x_fp32": "not_ane", "scaled_fp32": "not_ane", "exp_fp32": "not_ane", "back_fp16": "not_ane"},
      chip_assumed=True)
def _fp32_exp():
    p = Prog("CoreML8")
    C, T = 256, 2048  # a layer of a real model (Apple's rule is about them): 268 MFLOP for the conv
    x = p.inp("x", "fp16", [1, C, 1, T])
    y = conv(p, "conv_in", x, C, C, 1, [1, T])
    y = cast(p, "x_fp32", y, "fp32", [1, C, 1, T])
    y = binary(p, "mul", "scaled_fp32", y, p.cf(0.5), [1, C, 1, T], "fp32")
    y = unary(p, "exp", "exp_fp32", y, [1, C, 1, T], "fp32")
    cast(p, "back_fp16", y, "fp16", [1, C, 1, T])
    return p, [("back_fp16", "fp16", [1, C, 1, T])], "fp32 literal and exp in an fp16 graph"


# R5 rank >= 6 and gather_nd RoPE (Apple coreai-models rules)

@case("rank6_intermediate", "coreai-rule-rank-gathernd", ["R5"], "a18", "ios27",
      "any intermediate of rank >= 6 falls back; the rank-4 conv stays. Scaled to a layer of a real model "
      "(128 channels at 64x64, 1.2 GFLOP), which the rule is about", "ane",
      {"split6": "not_ane", "perm6": "not_ane"}, chip_assumed=True)
def _rank6():
    p = Prog("CoreML8")
    # a layer of a real model (Apple's rule is about them): 128 channels at 64x64, 1.2 GFLOP
    x = p.inp("x", "fp16", [1, 128, 64, 64])
    y = conv(p, "conv_in", x, 128, 128, 3, [64, 64])
    r = reshape(p, "split6", y, [1, 4, 32, 2, 32, 64])
    r = transpose(p, "perm6", r, [0, 2, 1, 3, 4, 5], [1, 32, 4, 2, 32, 64])
    reshape(p, "merge4", r, [1, 128, 64, 64])
    return p, [("merge4", "fp16", [1, 128, 64, 64])], "rank-6 intermediate"


@case("rope_gather_nd", "coreai-rule-rank-gathernd", ["R5", "R6"], "a18", "ios27",
      "gather_nd of a 2D cos/sin table by position_ids [B,S] inside the graph falls back", "not_ane",
      {"q_rot": "unknown"}, chip_assumed=True)
def _rope():
    p = Prog("CoreML8")
    pos = p.inp("position_ids", "int32", [1, 64, 1])
    q = p.inp("q", "fp16", [1, 64, 128])
    c = p.op("gather_nd", [("x", p.w([2048, 128])), ("indices", pos), ("batch_dims", p.ci(0, True)),
                           ("validate_indices", p.cb(False))], "cos_rows", "fp16", [1, 64, 128])
    binary(p, "mul", "q_rot", q, c, [1, 64, 128])
    return p, [("q_rot", "fp16", [1, 64, 128])], "RoPE table gathered in-graph"


# seeds vs 2026: dilated conv and pooling stride 4 (hollance 2020, iOS 13/14) vs Apple's 2026 rules

def _nn_dilated():
    nn = NN()
    nn.add("conv_d2", ["x"], 100, nn_conv(64, 64, 3, dil=2), "convolution")
    nn.add("relu", ["conv_d2"], 130, RELU, "activation")
    return nn, [nn_feature("x", [64, 64, 64])], ["relu"], "dilated conv (dilation 2)"


def _nn_pool4():
    nn = NN()
    nn.add("conv", ["x"], 100, nn_conv(64, 64, 3), "convolution")
    nn.add("pool_s4", ["conv"], 120, nn_pool(0, 4, 4), "pooling")
    return nn, [nn_feature("x", [64, 128, 128])], ["pool_s4"], "max pool kernel 4 stride 4"


case("nn_dilated_conv_ios13", "hollance-unsupported-dilated-conv", ["O13", "hollance"], "a12", "ios13",
     "2020: dilated convolutions listed as not running on the ANE", "ane", {"conv_d2": "not_ane"},
     chip_assumed=True, conf="loose")(_nn_dilated)
case("nn_dilated_conv_2026", "coreai-rule-strides", ["O13"], "a18", "ios27",
     "2026 Apple rules: dilation is supported but costly (factor it into 2/3 chains)", "ane", chip_assumed=True,
     conf="loose")(_nn_dilated)
case("nn_pool_stride4_ios13", "hollance-2-pool-stride4", ["O10", "hollance"], "a12", "ios13",
     "os_log 'Unsupported: stride_x = 4 > 2' (MobileNetV3, 2020)", "ane", {"pool_s4": "not_ane"},
     chip_assumed=True, conf="exact")(_nn_pool4)
case("nn_pool_stride4_2026", "coreai-rule-strides", ["O10"], "a18", "ios27",
     "2026 Apple rules: use pooling stride 2 or 4 (efficient); 3 or 5 introduce overhead", "ane",
     chip_assumed=True, conf="loose")(_nn_pool4)


def _nn_gap(same):
    def fn():
        nn = NN()
        # the report's model was a whole image network: 64 -> 256 channels at 56x56 (0.9 GFLOP)
        nn.add("conv", ["x"], 100, nn_conv(64, 256, 3), "convolution")
        nn.add("gap", ["conv"], 120, nn_pool(1, 1, 1, same=same, glob=True), "pooling")
        return nn, [nn_feature("x", [64, 56, 56])], ["gap"], "conv + global average pool, %s padding" % (
            "SAME" if same else "VALID")
    return fn


case("nn_gap_valid", "hollance-1-gap-valid", ["O10", "hollance"], "a12", "ios13",
     "global average pool with padding VALID after a conv kept the conv (and the pool) off the ANE. Scaled: "
     "the report's model was a whole image network, rebuilt as 64 -> 256 channels at 56x56 (0.9 GFLOP)",
     "not_ane",
     chip_assumed=True, conf="close")(_nn_gap(False))
case("nn_gap_same", "hollance-1-gap-valid", ["O10", "hollance"], "a12", "ios13",
     "the same with padding SAME worked on the ANE (scaled as nn_gap_valid)", "ane", chip_assumed=True, conf="close")(_nn_gap(True))


# softplus topologies (coremltools #2687, M1-M4, macOS 14+) and M2 Pro (#2814)

@case("softplus_conv_linear", "ct2687-softplus-topology", ["R9"], "a17", "macos14",
      "Conv2d(1->32,k3,same) -> softplus -> flatten -> Linear(2048->16): the topology chosen to route softplus "
      "to the NE (MLComputePlan repro)", "unknown", {"softplus": "ane"}, chip_assumed=True, os_assumed=True)
def _softplus_a():
    p = Prog("CoreML7")
    x = p.inp("x", "fp16", [1, 1, 8, 8])
    y = conv(p, "conv", x, 1, 32, 3, [8, 8])
    y = unary(p, "softplus", "softplus", y, [1, 32, 8, 8])
    y = reshape(p, "flatten", y, [1, 2048])
    lin(p, "fc", y, [1, 2048], 2048, 16)
    return p, [("fc", "fp16", [1, 16])], "conv -> softplus -> flatten -> linear"


@case("softplus_conv1x1", "ct2687-softplus-topology", ["R9"], "a17", "macos14",
      "1x1 conv -> softplus with no Linear: softplus on the CPU", "unknown", {"softplus": "cpu"},
      chip_assumed=True, os_assumed=True)
def _softplus_b():
    p = Prog("CoreML7")
    x = p.inp("x", "fp16", [1, 1, 8, 8])
    y = conv(p, "conv", x, 1, 32, 1, [8, 8])
    unary(p, "softplus", "softplus", y, [1, 32, 8, 8])
    return p, [("softplus", "fp16", [1, 32, 8, 8])], "1x1 conv -> softplus"


@case("softplus_m2pro", "ct2814-softplus-m2pro", ["R9"], "a15", "macos15",
      "softplus never on the ANE of an M2 Pro (runtime comparison across compute units)", "unknown",
      {"softplus": "cpu"}, os_assumed=True)
def _softplus_c():
    p = Prog("CoreML7")
    x = p.inp("x", "fp16", [1, 64, 64, 64])
    y = conv(p, "conv", x, 64, 64, 3, [64, 64])
    unary(p, "softplus", "softplus", y, [1, 64, 64, 64])
    return p, [("softplus", "fp16", [1, 64, 64, 64])], "conv -> softplus"


# grid_sample (resample)

def _grid(mode, pad, shape, grid, convs):
    def fn():
        p = Prog(OPSET_FOR_CASE[0])
        x = p.inp("x", "fp16", shape)
        g = p.inp("grid", "fp16", grid)
        N, C = shape[0], shape[1]
        if convs:
            x = p.op("conv_transpose", [("x", x), ("weight", p.w([C, C, 4, 4])), ("strides", p.ci([2, 2])),
                                        ("pad_type", p.cs("custom")), ("pad", p.ci([1, 1, 1, 1])),
                                        ("dilations", p.ci([1, 1])), ("groups", p.ci(1, True))],
                     "up_deconv", "fp16", [N, C, shape[2] * 2, shape[3] * 2])
        ins = [("x", x), ("coordinates", g), ("sampling_mode", p.cs(mode)), ("padding_mode", p.cs(pad)),
               ("padding_value", p.ch(0.0)), ("coordinates_mode", p.cs("normalized_minus_one_to_one")),
               ("align_corners", p.cb(True))]
        p.op("resample", ins, "grid_sample", "fp16", [N, C, grid[1], grid[2]])
        return p, [("grid_sample", "fp16", [N, C, grid[1], grid[2]])], "grid_sample %s/%s" % (mode, pad)
    return fn


case("grid_sample_macos14", "ct2299-gridsample-macos15", ["R9", "sec3"], "a15", "macos14",
     "ConvTranspose2d + grid_sample(reflection) on an M2: on the ANE under macOS 14 (Xcode report)", "ane")(
         _grid("bilinear", "reflection", [1, 64, 64, 64], [1, 128, 128, 2], True))
case("grid_sample_macos15", "ct2299-gridsample-macos15", ["R9", "sec3"], "a15", "macos15",
     "the same on the macOS 15 beta: grid_sample off the ANE (Xcode report)", "unknown",
     {"grid_sample": "gpu_or_cpu"})(_grid("bilinear", "reflection", [1, 64, 64, 64], [1, 128, 128, 2], True))
case("grid_sample_nearest_ios16", "forums-gridsample-npu", ["sec3"], "a15", "ios16",
     "grid_sample nearest/zeros/align_corners fp16 on (8,64,512,512): NPU in the profiler", "ane",
     chip_assumed=True)(_grid("nearest", "constant", [8, 64, 512, 512], [8, 256, 256, 2], False))


# R3 small graphs (FluidAudio ANE_Profiler, M5; aosama #540)

def _ctc(C, V):
    def fn():
        p = Prog("CoreML8")
        x = p.inp("encoder_output", "fp16", [1, C, 1, 188])
        y = conv(p, "ctc_logits", x, C, V, 1, [1, 188])
        y = p.op("squeeze", [("x", y), ("axes", p.ci([2]))], "ctc_squeeze", "fp16", [1, V, 188])
        y = transpose(p, "ctc_t", y, [0, 2, 1], [1, 188, V])
        p.op("softmax", [("x", y), ("axis", p.ci(-1, True))], "ctc_probs", "fp16", [1, 188, V])
        return p, [("ctc_probs", "fp16", [1, 188, V])], "4-op CTC head %d -> %d" % (C, V)
    return fn


case("ctc_decoder_4ops_7mb", "fa-small-graph-cpu", ["R3", "R9"], "a18", "macos26",
     "Parakeet Japanese CtcDecoder (4 ops, 7 MB): 100% on the ANE, the exception to the small-graph rule", "ane",
     conf="exact")(_ctc(1024, 3073))
case("ctc_head_2mb", "fa-small-graph-cpu", ["R3"], "a18", "macos26",
     "Parakeet CTC 110M CtcHead (6 ops, 2 MB): 100% on the CPU (rebuilt with the 4 ops of the CTC decoder)", "cpu",
     conf="exact")(_ctc(512, 1025))


@case("mel_preprocessor", "fa-small-graph-cpu", ["R3"], "a18", "macos26",
      "Preprocessor/mel (51 ops, 1 MB): 100% on the CPU (MLComputePlan)", "cpu", conf="exact")
def _mel():
    p = Prog("CoreML8")
    x = p.inp("audio", "fp16", [1, 1, 1, 16000])
    f = p.op("conv", [("x", x), ("weight", p.w([512, 1, 1, 400])), ("strides", p.ci([1, 160])),
                      ("pad_type", p.cs("valid")), ("pad", p.ci([0, 0, 0, 0])), ("dilations", p.ci([1, 1])),
                      ("groups", p.ci(1, True))], "stft", "fp16", [1, 512, 1, 98])
    sq = unary(p, "square", "stft_sq", f, [1, 512, 1, 98])
    re = p.op("slice_by_index", [("x", sq), ("begin", p.ci([0, 0, 0, 0])), ("end", p.ci([1, 256, 1, 98]))],
              "re2", "fp16", [1, 256, 1, 98])
    im = p.op("slice_by_index", [("x", sq), ("begin", p.ci([0, 256, 0, 0])), ("end", p.ci([1, 512, 1, 98]))],
              "im2", "fp16", [1, 256, 1, 98])
    pw = binary(p, "add", "power", re, im, [1, 256, 1, 98])
    mel = conv(p, "mel", pw, 256, 128, 1, [1, 98])
    mel = binary(p, "add", "mel_eps", mel, p.ch(1e-5), [1, 128, 1, 98])
    lg = unary(p, "log", "log_mel", mel, [1, 128, 1, 98])
    mean = p.op("reduce_mean", [("x", lg), ("axes", p.ci([3])), ("keep_dims", p.cb(True))], "mel_mean", "fp16",
                [1, 128, 1, 1])
    binary(p, "sub", "mel_norm", lg, mean, [1, 128, 1, 98])
    return p, [("mel_norm", "fp16", [1, 128, 1, 98])], "mel preprocessor"


@case("nn_tiny_grouped_predictor", "aosama-size-floor", ["R3"], "a18", "macos26",
      "tiny predictor nets (grouped 1x1 convs, ~1.4M FLOPs) compiled for CPU_AND_NE end up on the CPU", "cpu",
      os_assumed=True, conf="loose")
def _aosama():
    nn = NN()
    nn.add("g1", ["x"], 100, nn_conv(64, 64, 1, groups=4), "convolution")
    nn.add("a1", ["g1"], 130, RELU, "activation")
    nn.add("g2", ["a1"], 100, nn_conv(64, 64, 1, groups=4), "convolution")
    nn.add("a2", ["g2"], 130, RELU, "activation")
    nn.add("g3", ["a2"], 100, nn_conv(64, 16, 1, groups=4), "convolution")
    # 3 grouped 1x1 convs over 304 positions: 304 * 2 * (1024 + 1024 + 256) = 1.40 MFLOP, the report's size
    return nn, [nn_feature("x", [64, 1, 304])], ["g3"], "tiny grouped 1x1 predictor (~1.4 MFLOP)"


@case("mul_batched_matmul", "ct1761-bmm-gpu", ["R9"], "a15", "ios16",
      "element-wise mul then batched matmul of two activations: on the GPU (Xcode report)", "gpu",
      os_assumed=True, conf="loose")
def _bmm():
    p = Prog("CoreML6")
    a = p.inp("a", "fp16", [8, 128, 64])
    b = p.inp("b", "fp16", [8, 64, 128])
    m = binary(p, "mul", "scaled", a, p.ch(0.125), [8, 128, 64])
    matmul(p, "bmm", m, b, [8, 128, 128])
    return p, [("bmm", "fp16", [8, 128, 128])], "mul + batched matmul"


@case("rmsnorm_conv_block", "voxcpm-m5max-rmsnorm-ane", ["R9"], "a18", "macos26",
      "decomposed RMSNorm + 1x1 conv k/o projections + reshape, fp16: every op preferred on the ANE", "ane",
      os_assumed=True, conf="exact")
def _rmsnorm():
    p = Prog("CoreML8")
    C, T = 1024, 64
    x = p.inp("x", "fp16", [1, C, 1, T])
    sq = binary(p, "mul", "x_sq", x, x, [1, C, 1, T])
    ms = p.op("reduce_mean", [("x", sq), ("axes", p.ci([1])), ("keep_dims", p.cb(True))], "ms", "fp16",
              [1, 1, 1, T])
    ms = binary(p, "add", "ms_eps", ms, p.ch(1e-5), [1, 1, 1, T])
    r = unary(p, "rsqrt", "inv_rms", ms, [1, 1, 1, T])
    n = binary(p, "mul", "normed", x, r, [1, C, 1, T])
    k = conv(p, "k_proj", n, C, 256, 1, [1, T])
    k = reshape(p, "k_heads", k, [1, 4, 64, T])
    o = conv(p, "o_proj", n, C, 256, 1, [1, T])
    return p, [(k, "fp16", [1, 4, 64, T]), (o, "fp16", [1, 256, 1, T])], "decomposed RMSNorm + 1x1 convs"


# ---------------------------------------------------------------- second batch (2026-12)
# shared/knowledge/placement-evidence-2026-12.md; docs/fidelity.md says which of its 13 reports
# could not be rebuilt and why. Core AI (iOS / macOS 27) reports are rebuilt as ML Programs and
# predicted for ios27, as the coreai-rule-* cases are.

_LINEARS = ("patch_embed", "q", "k", "v", "o", "ff1", "ff2")


def _vit_block(kind):
    """coreai-models #279: a Qwen3.5-0.8B vision tower, pre-patchified [1, 196, patch_dim] input,
    the Conv3d patch embed as a Linear, compressed weights. One pre-norm block at hidden 1024 (the
    tower's width is not stated), 196 patch tokens (448 px) as measured: 5.9 GFLOP."""
    def fn():
        p = Prog("CoreML8")
        S, P, C = 196, 1536, 1024
        x = p.inp("patches", "fp16", [1, S, P])
        h = lin(p, "patch_embed", x, [1, S, P], P, C, kind)
        y = attention_block(p, h, S, C, 16, wdtype=kind)
        return p, [(y, "fp16", [1, S, C])], "ViT block with %s weights" % kind
    return fn


case("vit_block_int8_per_block", "coreai279-per-block-int8-ane", ["R8", "sec3"], "a18", "ios27",
     "8-bit per-block int weights in a vision tower, compute unit Neural Engine on an iPhone 16 Pro Max, "
     "iOS 27: output cosine 0.367 against 0.999 on the GPU, so the linears ran on the ANE (with wrong "
     "numbers); the other ops are not reported", "unknown", {n: "ane" for n in _LINEARS},
     conf="close")(_vit_block("block_int8"))
case("vit_block_pal8_grouped", "coreai279-per-block-int8-ane", ["R8"], "a18", "ios27",
     "the same tower 8-bit palettized (k-means, group 32) on the Neural Engine: cosine 0.9975, the linears "
     "on the ANE; the other ops are not reported", "unknown", {n: "ane" for n in _LINEARS},
     conf="close")(_vit_block("pal8_g32"))


@case("static_llm_block_int4", "coreai205-int4-static-llm-gpu", ["R8"], "a18", "ios27",
      "static-shape Qwen3-0.6B program with linear blockwise-INT4 weights, --preferred-compute neural-engine "
      "for h18p (iPhone 17 Pro): the ANE compile fails inside coreai-build and the .aimodelc is GPU-only "
      "(0 ANE regions). Rebuilt as one pre-norm block (hidden 1024, 16 heads) of the 16-token extend step "
      "its region name gives (extend_1024_16)", "gpu", conf="close")
def _static_llm_int4():
    p = Prog("CoreML8")
    S, C = 16, 1024
    x = p.inp("x", "fp16", [1, S, C])
    y = attention_block(p, x, S, C, 16, wdtype="block_int4")
    return p, [(y, "fp16", [1, S, C])], "LLM block with per-block int4 weights"


def _granite(variant):
    """john-rocky/coreai-model-zoo PR #36: granite-embedding-97m on a base M4, macOS 27. A pre-norm
    encoder (hidden 384, 6 heads, 128 tokens; the token embedding lookup is not rebuilt: the input is
    the embedded tokens), mean-pooled. One of the model's layers (its 13 ANE regions are 12 layers cut
    at each fp32 softmax, plus the pooling): 0.45 GFLOP. variant: "fp32" (the fp32 recipe), "upcast" (fp16
    with softmax(dtype=float32) and pooled.float()), "fp16" (the two upcasts removed)."""
    def fn():
        p = Prog("CoreML8")
        S, C, H, L = 128, 384, 6, 1
        D = C // H
        dt = "fp32" if variant == "fp32" else "fp16"
        x = p.inp("embedded", dt, [1, S, C])
        for i in range(L):
            pre = "l%d_" % i

            def norm(name, t):
                return p.op("layer_norm", [("x", t), ("axes", p.ci([-1])), ("gamma", p.w([C], dt)),
                                           ("beta", p.w([C], dt)), ("epsilon", p.cf(1e-5) if dt == "fp32"
                                                                    else p.ch(1e-5))], name, dt, [1, S, C])
            n = norm(pre + "ln1", x)
            heads = []
            for nm in ("q", "k", "v"):
                t = lin(p, pre + nm, n, [1, S, C], C, C, dt, dt)
                t = reshape(p, pre + nm + "_heads", t, [1, S, H, D], dt)
                heads.append(transpose(p, pre + nm + "_t", t, [0, 2, 1, 3], [1, H, S, D], dt))
            sc = matmul(p, pre + "scores", heads[0], heads[1], [1, H, S, S], ty=True, dtype=dt)
            if variant == "upcast":
                sc = cast(p, pre + "scores_fp32", sc, "fp32", [1, H, S, S])
                a = softmax(p, pre + "attn_fp32", sc, [1, H, S, S], dtype="fp32")
                a = cast(p, pre + "attn_fp16", a, "fp16", [1, H, S, S])
            else:
                a = softmax(p, pre + "attn", sc, [1, H, S, S], dtype=dt)
            o = matmul(p, pre + "ctx", a, heads[2], [1, H, S, D], dtype=dt)
            o = transpose(p, pre + "ctx_t", o, [0, 2, 1, 3], [1, S, H, D], dt)
            o = reshape(p, pre + "ctx_flat", o, [1, S, C], dt)
            o = lin(p, pre + "o", o, [1, S, C], C, C, dt, dt)
            x = binary(p, "add", pre + "res1", x, o, [1, S, C], dt)
            n = norm(pre + "ln2", x)
            f = lin(p, pre + "ff1", n, [1, S, C], C, 4 * C, dt, dt)
            f = p.op("gelu", [("x", f), ("mode", p.cs("EXACT"))], pre + "gelu", dt, [1, S, 4 * C])
            f = lin(p, pre + "ff2", f, [1, S, 4 * C], 4 * C, C, dt, dt)
            x = binary(p, "add", pre + "res2", x, f, [1, S, C], dt)
        if variant == "upcast":
            x = cast(p, "hidden_fp32", x, "fp32", [1, S, C])
        out_dt = "fp16" if variant == "fp16" else "fp32"
        p.op("reduce_mean", [("x", x), ("axes", p.ci([1])), ("keep_dims", p.cb(False))], "pooled", out_dt, [1, C])
        return p, [("pooled", out_dt, [1, C])], "embedding encoder (%s)" % variant
    return fn


case("granite_fp32", "zoo36-granite-fp32-upcasts", ["R1"], "a17", "macos27",
     "embedding model exported at fp32 (the recipe's default): zero ANE regions", "not_ane",
     conf="close")(_granite("fp32"))
case("granite_fp16_upcasts", "zoo36-granite-fp32-upcasts", ["R1"], "a17", "macos27",
     "the same at fp16 with softmax(dtype=float32) and pooled.float(): 13 ANE regions, cut at the fp32 "
     "ops (the casts around them are not reported)", "ane",
     {"l0_scores_fp32": "unknown", "l0_attn_fp32": "not_ane", "l0_attn_fp16": "unknown",
      "hidden_fp32": "unknown", "pooled": "not_ane"}, conf="close")(_granite("upcast"))
case("granite_fp16", "zoo36-granite-fp32-upcasts", ["R1"], "a17", "macos27",
     "the two fp32 upcasts removed: one ANE region (latency 13.2 -> 2.1 ms)", "ane",
     conf="close")(_granite("fp16"))


# ---------------------------------------------------------------- writing

VERDICTS = {"ane", "cpu", "gpu", "gpu_or_cpu", "not_ane", "unknown"}


def generate(out):
    models = os.path.join(out, "models")
    if os.path.isdir(models):
        shutil.rmtree(models)
    os.makedirs(models)
    cases = []
    for c in CASES:
        ios = int(IOS_OF.get(c["os_reported"], c["os_reported"])[3:])
        OPSET_FOR_CASE[0] = "CoreML6" if ios <= 16 else "CoreML7"
        r = c["fn"]()
        if isinstance(r[0], NN):
            nn, ins, outs, short = r
            mb, weights = nn.build(ins, outs, short)
            nodes, fname = nn.nodes, c["id"] + ".mlmodel"
            with open(os.path.join(models, fname), "wb") as f:
                f.write(mb)
        else:
            p, outs, short = r
            assert MIN_IOS[p.opset] <= ios, (c["id"], p.opset, c["os_reported"])  # the model must run there
            mb, weights = p.build(outs, short)
            nodes, fname = p.nodes, c["id"] + ".mlpackage"
            write_package(os.path.join(models, fname), mb, weights)
        names = [n for n, _ in nodes]
        assert len(set(names)) == len(names), (c["id"], names)
        for k in c["over"]:
            assert k in names, (c["id"], k)
        ops = []
        for n, t in nodes:
            v = c["over"].get(n, c["default"])
            assert v in VERDICTS, (c["id"], n, v)
            ops.append({"name": n, "type": t, "observed": v, "note": c["note"]})
        assert c["report"] in REPORTS, c["report"]
        cases.append({
            "id": c["id"], "report": c["report"], "url": REPORTS[c["report"]], "rules": c["tags"],
            "chip": c["chip"], "chip_assumed": c["chip_assumed"],
            "os_reported": c["os_reported"], "os": IOS_OF.get(c["os_reported"], c["os_reported"]),
            "os_assumed": c["os_assumed"],
            "compute_units": COMPUTE_UNITS.get(c["report"], "all"),
            "compute_units_assumed": c["report"] not in COMPUTE_UNITS,
            "confidence": c["conf"], "model": "models/" + fname,
            "note": c["note"], "ops": ops,
        })
    doc = {
        "about": "anelint fidelity set: small models rebuilt from public placement reports, with the "
                 "placement Core ML was seen to choose per op (docs/fidelity.md). Generated by "
                 "tools/mkobserved.py; do not edit by hand.",
        "verdicts": {"ane": "on the ANE", "cpu": "on the CPU", "gpu": "on the GPU",
                     "gpu_or_cpu": "off the ANE, on the GPU or the CPU (the report names both or neither)",
                     "not_ane": "the report says only: not on the ANE",
                     "unknown": "the report says nothing about this op: not counted"},
        "cases": cases,
    }
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    write_readme(out, cases)
    return cases


README_HEAD = """# tests/observed: the fidelity set

Small Core ML models, each rebuilding one construct of one public report of where Core ML placed
ops (ANE / GPU / CPU), with the placement that report observed per op. `make fidelity` runs
`anelint check` on each for the report's chip, release and compute units and prints how
often the prediction agrees; docs/fidelity.md explains the set, the scoring, the current figures and
which reports could not be rebuilt.

## Provenance

Everything here is generated by our own generator, `tools/mkobserved.py` (Python stdlib only, the
protobuf writers of tools/pbwire.py, tools/mkfixtures.py and tools/mkfixtures_mil.py); this file too.
No model comes from the reports (they ship none) and no code from them: shapes, ops and dtypes follow
each report's text, weights are zeros. Regenerate with

    python3 tools/mkobserved.py --out build/observed   # writes models/, cases.json and this README
    python3 tools/mkobserved.py            # the same into tests/observed (cases.json, README.md
                                           # are committed; models/ is not: 195 MB of zero weights)
    python3 tools/mkobserved.py --check    # exit 1 when cases.json / README.md differ from a fresh run

The output is the same bytes on every run. `make fidelity` generates the models into
build/observed/models and runs the check first.

Sizes are small except where the evidence is a size threshold: then the shapes that cross it are
kept (the RNNT joint keeps the report's 1024/640 -> 13088 widths, 19 MB of zero weights; the CTC
heads keep 7 MB vs 2 MB). Where a construct is categorical (an lstm, a gather, a cond), the sizes are
cut (lstm hidden 64 instead of 640, embedding tables of 128-1024 rows, LM-head hidden 8-16).

`cases.json`: per case `id`, `report` (the id in shared/knowledge/placement-evidence.md section 4, or
a catalog fact), `url`, `rules` (evidence tags R1-R10, catalog ids O10/O13/L7, `sec3` for section 3,
`hollance`), `chip` (anelint target id), `os_reported` and `os` (the iOS-equivalent release),
`compute_units` (the MLModelConfiguration.computeUnits the report ran with: `all`, `cpu-and-gpu`,
`cpu-and-ne`, `cpu-only`; `all`, Core ML's default, where the report does not say),
`chip_assumed` / `os_assumed` / `compute_units_assumed` (true when the report does not say and the
value is our best reading: marked * below), `confidence` (exact / close / loose, as in the evidence table), `model`, `note`, and
`ops`: every non-const op or layer by its output name with `observed` one of `ane`, `cpu`, `gpu`,
`gpu_or_cpu`, `not_ane` (the report says only "not on the ANE") or `unknown` (the report says nothing
about that op: not counted).

`split.json` (issue #30): which reports are for development (rules may be written from them) and
which are held out (scored apart, never used to write or tune a rule), drawn per batch of reports by
`split.py` with a fixed seed and never redrawn; `python3 tests/observed/split.py` checks it and
`--draw NAME` assigns the reports a new batch of cases brings. `rule_support.json`: the reports
each anelint rule's provenance cites, for the leave-one-report-out figure of tests/fidelity.py.

## Cases

| case | report | evidence | chip | release | units | ops counted | what the report says |
|---|---|---|---|---|---|---|---|
"""


def write_readme(out, cases):
    rows = []
    for c in cases:
        n = sum(1 for o in c["ops"] if o["observed"] != "unknown")
        rows.append("| `%s` | %s | %s | %s%s | %s%s | %s%s | %d of %d | %s |" % (
            c["id"], c["report"], " ".join(c["rules"]), c["chip"], "*" if c["chip_assumed"] else "",
            c["os_reported"], "*" if c["os_assumed"] else "", c["compute_units"],
            "*" if c["compute_units_assumed"] else "", n, len(c["ops"]), c["note"].replace("|", "/")))
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(README_HEAD + "\n".join(rows) + "\n")


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(same_tree(os.path.join(a, d), os.path.join(b, d)) for d in cmp.common_dirs)


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "tests", "observed")
    if "--out" in argv:
        out = argv[argv.index("--out") + 1]
    if "--check" in argv:
        # the committed files (cases.json, README.md) against a fresh generation;
        # the models themselves are generated at test time, never committed
        with tempfile.TemporaryDirectory() as tmp:
            generate(tmp)
            ok = all(filecmp.cmp(os.path.join(tmp, f), os.path.join(out, f), shallow=False)
                     for f in ("cases.json", "README.md"))
        print("tests/observed: %s" % ("matches a fresh generation" if ok else "DIFFERS from a fresh generation"))
        return 0 if ok else 1
    cases = generate(out)
    print("%d cases, %d ops -> %s" % (len(cases), sum(len(c["ops"]) for c in cases), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
