#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/spdx.sh: every source file carries its SPDX licence line (tools/spdx.py).
exec python3 tools/spdx.py --check
