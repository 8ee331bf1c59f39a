#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/seed.sh: build the seed corpora build/fuzz/seeds-{mlmodel,mil,mlpackage}/
# from the repo's fixtures (tests/data) and, when present, the shared corpus
# (../shared/corpus/converted and ../shared/corpus/real). Run from the repo root;
# `make fuzz` runs it. Seeds stay under build/ (ignored by git): seeds made from
# ../shared/corpus/real must never be committed.
#   sh fuzz/seed.sh [OUTDIR]        (default build/fuzz)
set -eu
out=${1:-build/fuzz}
corpus=${ANELINT_CORPUS:-../shared/corpus}
set -- tests/data
for d in "$corpus/converted" "$corpus/real"; do
	[ -d "$d" ] && set -- "$@" "$d"
done
mkdir -p "$out"
python3 fuzz/mkseeds.py "$out" "$@"
