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

# MIL text (fuzz_miltext.c) and espresso (fuzz_espresso.c) seeds from the
# compiled models: [u16 LE L][L bytes][text], L = 0 when the binary part is
# over 64 KB (weight.bin / model.espresso.weights), kept otherwise; espresso
# seeds carry model.espresso.shape the same way between the two:
# [u16 W][weights][u16 S][shape][net].
mkdir -p "$out/seeds-miltext" "$out/seeds-espresso"
rm -f "$out/seeds-miltext/"* "$out/seeds-espresso/"*
part() { # part FILE: [u16 LE n][n bytes of FILE] to stdout; n = 0 when absent or over 64 KB
	n=0
	[ -f "$1" ] && n=$(wc -c <"$1" | tr -d ' ')
	[ "$n" -gt 65535 ] && n=0
	python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<H", int(sys.argv[1])))' "$n"
	[ "$n" -gt 0 ] && cat "$1"
	return 0
}
frame() { # frame BINARY TEXT OUT
	part "$1" >"$3"
	cat "$2" >>"$3"
}
frame3() { # frame3 BINARY SHAPE TEXT OUT
	{ part "$1"; part "$2"; cat "$3"; } >"$4"
}
for d in tests/data/compiled/*.mlmodelc "$corpus"/compiled/*.mlmodelc "$corpus"/compiled/*.mlmodelc/model*; do
	[ -d "$d" ] || continue
	tag=$(basename "$(dirname "$d")")_$(basename "$d")
	[ -f "$d/model.mil" ] && frame "$d/weights/weight.bin" "$d/model.mil" "$out/seeds-miltext/$tag"
	[ -f "$d/model.espresso.net" ] && frame3 "$d/model.espresso.weights" "$d/model.espresso.shape" "$d/model.espresso.net" "$out/seeds-espresso/$tag"
done
echo "seed.sh: miltext $(ls "$out/seeds-miltext" | wc -l), espresso $(ls "$out/seeds-espresso" | wc -l) seeds"

# Evidence seeds (fuzz_evidence.c): [1 byte format][text], from the samples in
# tests/data/evidence/ (format byte 0: detected by content) and the fixtures'
# predictions as written by `anelint compare --write-evidence` in each format
# (byte 1..5) when build/anelint exists.
mkdir -p "$out/seeds-evidence"
rm -f "$out/seeds-evidence/"*
i=0
for f in tests/data/evidence/*.* tests/data/evidence/*.mlperf/report.json; do
	[ -f "$f" ] || continue
	i=$((i + 1))
	{ printf '\000'; cat "$f"; } >"$out/seeds-evidence/sample$i"
done
if [ -x build/anelint ]; then
	k=0
	for f in json mil plan mlperf oslog placement; do
		k=$((k + 1))
		for m in tests/data/crafted/mil_rules.mlpackage tests/data/crafted/nn_rules.mlmodel \
			tests/data/converted/transformer_encoder__mlp_ios17_fp16.mlpackage; do
			b=$(printf '\\%03o' "$k")
			{ printf "$b"; build/anelint compare "$m" --write-evidence $f 2>/dev/null; } \
				>"$out/seeds-evidence/$f-$(basename "$m")"
		done
	done
fi
echo "seed.sh: evidence $(ls "$out/seeds-evidence" | wc -l) seeds"
