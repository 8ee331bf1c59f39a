// SPDX-License-Identifier: MIT
// compute_plan.swift: where Core ML plans to run each op of a model, as anelint
// evidence JSON (docs/evidence.md, schema "anelint-evidence" version 1): the same
// file tools/mac/compute_plan.py writes, without Python or coremltools.
//
// On a Mac with macOS 14.4+ (MLComputePlan) and the Xcode command line tools:
//
//     swift tools/mac/compute_plan.swift Model.mlpackage --chip m1 -o m1.evidence.json
//     anelint compare Model.mlpackage m1.evidence.json
//
// Options: --chip ID (required: the plan does not name the chip family; an
// `anelint targets` id or alias), --units all|cpu-and-ne|cpu-and-gpu|cpu-only
// (default all), --function NAME (an ML Program function; default every one),
// -o FILE (default stdout).
//
// NOT COMPILED OR RUN BY ANELINT'S TESTS: it needs macOS and Core ML, and the
// project is built and tested on Linux. It was written from Apple's documentation
// of MLComputePlan (load(contentsOf:configuration:), modelStructure,
// deviceUsage(for:), estimatedCost(of:)) and MLModelStructure; treat its first run
// on a Mac as its test, and compare its output with compute_plan.py's.

import CoreML
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(("compute_plan.swift: " + message + "\n").data(using: .utf8)!)
    exit(2)
}

// ---- arguments
var modelPath: String?
var chip: String?
var units = "all"
var function: String?
var output = "-"
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--chip": chip = args.next()
    case "--units": units = args.next() ?? ""
    case "--function": function = args.next()
    case "-o", "--output": output = args.next() ?? "-"
    case "-h", "--help":
        print("usage: swift compute_plan.swift MODEL --chip ID [--units all|cpu-and-ne|cpu-and-gpu|cpu-only] [--function NAME] [-o FILE]")
        exit(0)
    default:
        if a.hasPrefix("-") || modelPath != nil { fail("unexpected argument '\(a)'") }
        modelPath = a
    }
}
guard let modelPath = modelPath else { fail("give the model (.mlpackage, .mlmodel or .mlmodelc)") }
guard let chip = chip else { fail("give --chip (m1, a17, m4 ...: anelint targets)") }
let computeUnits: [String: MLComputeUnits] = [
    "all": .all, "cpu-and-ne": .cpuAndNeuralEngine, "cpu-and-gpu": .cpuAndGPU, "cpu-only": .cpuOnly,
]
guard let cu = computeUnits[units] else { fail("--units takes all, cpu-and-ne, cpu-and-gpu or cpu-only") }

// ---- the plan
func unitName(_ usage: MLComputePlanDeviceUsage?) -> String? {
    guard let usage = usage else { return nil } // a const: no device
    switch usage.preferred {
    case .neuralEngine: return "ane"
    case .gpu: return "gpu"
    case .cpu: return "cpu"
    @unknown default: return nil
    }
}

func programOps(_ plan: MLComputePlan, _ block: MLModelStructure.Program.Block, _ out: inout [[String: Any]], _ depth: Int) {
    if depth > 64 { return }
    for op in block.operations {
        if let unit = unitName(plan.deviceUsage(for: op)), let first = op.outputs.first {
            var entry: [String: Any] = ["name": first.name, "type": op.operatorName, "unit": unit]
            if let cost = plan.estimatedCost(of: op) { entry["cost"] = cost.weight }
            out.append(entry)
        }
        for sub in op.blocks { programOps(plan, sub, &out, depth + 1) }
    }
}

func capture() async throws -> [String: Any] {
    var url = URL(fileURLWithPath: modelPath)
    if url.pathExtension != "mlmodelc" { url = try await MLModel.compileModel(at: url) }
    let config = MLModelConfiguration()
    config.computeUnits = cu
    let plan = try await MLComputePlan.load(contentsOf: url, configuration: config)
    var ops: [[String: Any]] = []
    switch plan.modelStructure {
    case .program(let program):
        for (name, fn) in program.functions.sorted(by: { $0.key < $1.key }) where function == nil || function == name {
            programOps(plan, fn.block, &ops, 0)
        }
    case .neuralNetwork(let nn):
        for layer in nn.layers {
            if let unit = unitName(plan.deviceUsage(for: layer)) {
                ops.append(["name": layer.name, "type": layer.type, "unit": unit])
            }
        }
    default:
        fail("neither an ML Program nor a NeuralNetwork (a pipeline: give one stage)")
    }
    let v = ProcessInfo.processInfo.operatingSystemVersion
    return [
        "schema": "anelint-evidence",
        "version": 1,
        "chip": chip,
        "os": "macOS \(v.majorVersion).\(v.minorVersion)",
        "device": ProcessInfo.processInfo.hostName,
        "compute_units": units,
        "source": "tools/mac/compute_plan.swift (MLComputePlan, compute units \(units))",
        "ops": ops,
    ]
}

// ---- run, write
Task {
    do {
        let doc = try await capture()
        var data = try JSONSerialization.data(withJSONObject: doc, options: [.prettyPrinted, .sortedKeys])
        data.append(0x0A)
        if output == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
        }
        exit(0)
    } catch {
        fail("\(modelPath): \(error)")
    }
}
dispatchMain()
