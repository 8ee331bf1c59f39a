#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/portability.sh: Linux-only calls stay behind the feature checks of
# src/base/platform.c (tests/portability.py says which calls and why).
exec python3 tests/portability.py
