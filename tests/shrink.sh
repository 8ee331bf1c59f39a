#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/shrink.sh: a model file shrinking under a run ends in exit 4 and one line,
# never SIGBUS (tests/shrink.py makes the 64 MB model in a temporary directory).
set -u
: "${ANELINT:=build/anelint}"
exec python3 tests/shrink.py "$ANELINT"
