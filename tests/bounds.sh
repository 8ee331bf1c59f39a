#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/bounds.sh: the interpreter's bounds on work (--max-work, loop iterations)
# and memory (--max-memory over every run of a command): tests/bounds.py.
set -u
: "${ANELINT:=build/anelint}"
exec python3 tests/bounds.py "$ANELINT"
