#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compute_plan.py: capture where Core ML plans to run each op of a model, as
anelint evidence JSON (docs/evidence.md, schema "anelint-evidence" version 1).

Runs on a Mac (macOS 14.4+) with coremltools >= 8 (`pip install coremltools`):
it compiles the model, loads its MLComputePlan for the compute units asked for,
and writes one op per line of the plan: the op's first output name (an ML
Program) or the layer name (a NeuralNetwork), its type, and the preferred
compute device. Then, anywhere:

    python3 tools/mac/compute_plan.py Model.mlpackage --chip m1 -o m1.evidence.json
    anelint compare Model.mlpackage m1.evidence.json
    anelint calibrate Model.mlpackage m1.evidence.json -o m1.rules

--chip names the chip family (a `anelint targets` id or alias: m1, a17, m4 ...);
the OS release is read from this Mac. The script was written from Apple's and
coremltools' API documentation; anelint's tests cannot run it (no Mac in CI).
"""

import argparse
import json
import platform
import sys

UNITS = {
    "MLNeuralEngineComputeDevice": "ane",
    "MLGPUComputeDevice": "gpu",
    "MLCPUComputeDevice": "cpu",
}


def unit_of(usage):
    """The preferred device of an MLComputePlanDeviceUsage, as an evidence unit."""
    if usage is None:
        return None
    dev = getattr(usage, "preferred_compute_device", None)
    return UNITS.get(type(dev).__name__)


def program_ops(plan, block, out, depth=0):
    """Every op of a block (nested blocks too), in program order."""
    if depth > 64:
        return
    for op in block.operations:
        unit = unit_of(plan.get_compute_device_usage_for_mlprogram_operation(op))
        outputs = list(getattr(op, "outputs", []) or [])
        if unit is not None and outputs:
            entry = {"name": outputs[0].name, "type": op.operator_name, "unit": unit}
            cost = plan.get_estimated_cost_for_mlprogram_operation(op)
            if cost is not None:
                entry["cost"] = cost.weight
            out.append(entry)
        for sub in getattr(op, "blocks", []) or []:
            program_ops(plan, sub, out, depth + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help=".mlpackage, .mlmodel or compiled .mlmodelc")
    ap.add_argument("--chip", required=True, help="chip family: m1, a17, m4 ... (anelint targets)")
    ap.add_argument("--units", default="all", choices=["all", "cpu_and_ne", "cpu_and_gpu", "cpu_only"],
                    help="compute units the plan is made for (default all)")
    ap.add_argument("--function", default=None, help="ML Program function (default: every one)")
    ap.add_argument("-o", "--output", default="-", help="evidence file (default stdout)")
    a = ap.parse_args()

    import coremltools as ct  # imported here so --help works without it

    units = {"all": ct.ComputeUnit.ALL, "cpu_and_ne": ct.ComputeUnit.CPU_AND_NE,
             "cpu_and_gpu": ct.ComputeUnit.CPU_AND_GPU, "cpu_only": ct.ComputeUnit.CPU_ONLY}[a.units]
    path = a.model
    if not path.rstrip("/").endswith(".mlmodelc"):
        path = ct.models.MLModel(a.model, compute_units=units).get_compiled_model_path()
    plan = ct.models.compute_plan.MLComputePlan.load_from_path(path, compute_units=units)

    ops = []
    structure = plan.model_structure
    if structure.program is not None:
        for name, fn in structure.program.functions.items():
            if a.function is None or a.function == name:
                program_ops(plan, fn.block, ops)
    elif structure.neuralnetwork is not None:
        for layer in structure.neuralnetwork.layers:
            unit = unit_of(plan.get_compute_device_usage_for_neuralnetwork_layer(layer))
            if unit is not None:
                ops.append({"name": layer.name, "type": layer.type, "unit": unit})
    else:
        sys.exit("compute_plan.py: neither an ML Program nor a NeuralNetwork (a pipeline: give one stage)")

    mac = platform.mac_ver()[0]
    doc = {
        "schema": "anelint-evidence",
        "version": 1,
        "chip": a.chip,
        "os": "macOS " + mac if mac else None,
        "device": platform.machine() + " " + platform.node(),
        "compute_units": a.units.replace("_", "-"),
        "source": "tools/mac/compute_plan.py (MLComputePlan, compute units %s)" % a.units,
        "ops": ops,
    }
    text = json.dumps(doc, indent=1) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
