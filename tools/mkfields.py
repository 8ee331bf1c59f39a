#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/mkfields.py: writes src/format/coreml_fields.h, the field numbers of Core ML's
protobuf messages as named constants, from the .proto files of the format (coremltools'
mlmodel/format/, e.g. the source tree tools/../shared/tools/coremltools-local builds).

Usage: python3 tools/mkfields.py PROTO_DIR > src/format/coreml_fields.h

Each field of each message becomes AL_PB_<Message>_<field> (nested messages joined by
'_', names as the .proto spells them), enum values are not listed. The header is
committed: the build never needs the .proto files. Only src/format/ and, for the
fields a rewrite splices, src/rewrite/ use these names; no other file writes a field
number (tests/architecture.py)."""
import os, re, sys

FILES = ["Model.proto", "NeuralNetwork.proto", "MIL.proto", "FeatureTypes.proto",
         "DataStructures.proto", "Parameters.proto"]


def fields(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    stack, out = [], []
    for tok in re.finditer(r"\b(message|enum|oneof)\s+(\w+)\s*\{|\}|([^;{}]+);", text):
        if tok.group(1):
            stack.append((tok.group(1), tok.group(2)))
        elif tok.group(0) == "}":
            if stack:
                stack.pop()
        else:
            stmt = " ".join(tok.group(3).split())
            m = re.match(r"(?:repeated\s+|optional\s+)?(?:map\s*<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+)", stmt)
            if not m or not stack or stack[-1][0] == "enum":
                continue
            msgs = [n for k, n in stack if k == "message"]
            out.append(("_".join(msgs), m.group(1), int(m.group(2))))
    return out


def main():
    d = sys.argv[1]
    print("/* SPDX-License-Identifier: MIT */")
    print("/* coreml_fields.h: the field numbers of Core ML's protobuf messages, written by")
    print(" * tools/mkfields.py from the format's .proto files (do not edit). AL_PB_<Message>_<field>:")
    print(" * nested messages joined by '_'. Field numbers from coremltools mlmodel/format/<Name>.proto")
    print(" * (BSD-3-Clause; facts, not code). */")
    print("#ifndef ANELINT_COREML_FIELDS_H")
    print("#define ANELINT_COREML_FIELDS_H")
    seen = {}
    for f in FILES:
        p = os.path.join(d, f)
        if not os.path.exists(p):
            continue
        print("\n/* %s */" % f)
        for msg, field, num in fields(open(p).read()):
            name = "AL_PB_%s_%s" % (msg, field)
            if name in seen:
                if seen[name] != num:
                    sys.exit("%s: %d and %d" % (name, seen[name], num))
                continue
            seen[name] = num
            print("#define %s %d" % (name, num))
    print("\n#endif")


if __name__ == "__main__":
    main()
