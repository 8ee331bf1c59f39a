#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/architecture.sh: no library object in a circle with another, no stage
# including a header of a stage above it (tests/architecture.py says how).
exec python3 tests/architecture.py "${BUILD:-build}"
