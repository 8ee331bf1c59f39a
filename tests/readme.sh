#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/readme.sh: the README's example outputs ("$ anelint ..." blocks) are run and
# compared with what the README shows (tests/readme.py), so that they cannot go stale.
: "${ANELINT:=build/anelint}"
exec python3 tests/readme.py "$ANELINT" README.md
