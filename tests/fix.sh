#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix.sh: `anelint fix` (docs/surgery.md) on real models: the fallback count
# drops, the proof passes, refusals write nothing (each NeuralNetwork pass on its
# crafted fixture: tests/pass_<pass name>.sh), every model that needs no
# rewrite round-trips byte for byte, every output parses (protoc --decode_raw
# when installed) and re-loads, and hostile input is refused with exit 3.
# Corpus parts skip when ../shared/corpus is absent.
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
# counters, ok / bad / fallbacks, applies / left / has
. tests/lib/fix_pass.sh

# 1. upsample x4 nearest -> two x2 upsamples: 1 fallback -> 0, bit-identical (its output is
#    the --in-place reference of 5; tests/pass_upsample_x2_chain.sh has the pass's own)
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel -o "$T/up.mlmodel" --format json >"$T/up.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(fallbacks before "$T/up.json")" = 1 ] && [ "$(fallbacks after "$T/up.json")" = 0 ] &&
	grep -q '"identical": true' "$T/up.json" && grep -q '"written": true' "$T/up.json"; then ok; else bad "upsample x4 (rc $rc)"; cat "$T/up.json"; fi
n=$("$ANELINT" check --all "$T/up.mlmodel" | grep -c ' upsample ')
[ "$n" -eq 2 ] && ok || bad "upsample: $n upsample layers in the output (2 expected)"

# 2. (addb-to-add: tests/pass_addb_to_add.sh)

# 3. legacy rank-5 model: upsample x4 rewritten, pooling k15 s3 left (stride 3 stays illegal)
"$ANELINT" fix $D/builder__legacy_rank5_elementwise.mlmodel -o "$T/r5.mlmodel" >"$T/r5.txt"
rc=$?
if [ $rc -eq 0 ] && grep -q 'changed  up4 ' "$T/r5.txt" && grep -q 'left     pool15 .*ANE009' "$T/r5.txt" &&
	grep -q 'check before: 9 layers, 3 fall back' "$T/r5.txt" && grep -q 'check after:  10 layers, 2 fall back' "$T/r5.txt"
then ok; else bad "rank5 (rc $rc)"; cat "$T/r5.txt"; fi

# 4. a model the interpreter cannot run on random inputs (gather indices out of
#    range): --proof whole refuses, nothing written; --proof auto falls back to the
#    region proof (the gather is not in the region); with --inputs holding valid
#    indices: proved on the whole models
"$ANELINT" fix $D/builder__nd_broadcastable_gather.mlmodel -o "$T/nd.mlmodel" --proof whole >"$T/nd.txt"
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$T/nd.mlmodel" ] && grep -q REFUSED "$T/nd.txt"; then ok; else bad "nd refusal (rc $rc)"; fi
"$ANELINT" fix $D/builder__nd_broadcastable_gather.mlmodel -o "$T/nd.mlmodel" >"$T/nd.txt"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/nd.mlmodel" ] && grep -q '^proof: region' "$T/nd.txt" &&
	grep -q 'the whole models could not run (.*gather.*): the region proof ran instead' "$T/nd.txt"
then ok; else bad "nd auto -> region (rc $rc)"; cat "$T/nd.txt"; fi
rm -f "$T/nd.mlmodel"
mkdir -p "$T/in"
# idx.npy: int32 [2] = {1, 3}
python3 -c '
import struct,sys
h="{\x27descr\x27: \x27<i4\x27, \x27fortran_order\x27: False, \x27shape\x27: (2,), }"
h+=" "*(64-10-len(h)-1)+"\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00"+struct.pack("<H",len(h))+h.encode()+struct.pack("<2i",1,3))' >"$T/in/idx.npy"
"$ANELINT" fix $D/builder__nd_broadcastable_gather.mlmodel -o "$T/nd.mlmodel" --inputs "$T/in" >"$T/nd.txt"
rc=$?
if [ $rc -eq 0 ] && [ -s "$T/nd.mlmodel" ] && grep -q 'changed  mulb' "$T/nd.txt" &&
	grep -q 'left     cat .*channel axis' "$T/nd.txt" && ! grep -q REFUSED "$T/nd.txt"; then ok; else bad "nd with --inputs (rc $rc)"; cat "$T/nd.txt"; fi

# 5. -o equal to the input is refused unless --in-place; the input is unchanged
cp $D/upsample_x4_nearest__nn_ios13.mlmodel "$T/self.mlmodel"
"$ANELINT" fix "$T/self.mlmodel" -o "$T/self.mlmodel" >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && cmp -s "$T/self.mlmodel" $D/upsample_x4_nearest__nn_ios13.mlmodel; then ok; else bad "-o = input (rc $rc)"; fi
"$ANELINT" fix "$T/self.mlmodel" --in-place >/dev/null
rc=$?
if [ $rc -eq 0 ] && cmp -s "$T/self.mlmodel" "$T/up.mlmodel"; then ok; else bad "--in-place (rc $rc)"; fi
ls "$T" | grep -Eq "tmp|\.fix" && bad "temporary file left behind" || ok

# 6. --dry-run writes nothing; no -o is a usage error
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel -o "$T/dry.mlmodel" --dry-run >/dev/null
rc=$?
if [ $rc -eq 0 ] && [ ! -e "$T/dry.mlmodel" ]; then ok; else bad "dry run (rc $rc)"; fi
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "no -o"
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel --dry-run --allow bogus >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--allow bogus"

# 7. the NeuralNetwork passes on their crafted fixtures: each pass's own
#    tests/pass_<pass name>.sh (tests/lib/fix_pass.sh has the helpers).

# 8. every model: no rewrite -> byte-identical; rewritten -> parses and re-loads;
#    malformed -> exit 3 with one line on stderr, nothing written
roundtrip() {
	for m in "$@"; do
		[ -f "$m" ] || continue
		out="$T/rt.mlmodel"
		rm -f "$out"
		"$ANELINT" fix "$m" -o "$out" >"$T/rt.txt" 2>"$T/rt.err"
		rc=$?
		if [ $rc -eq 3 ]; then
			if [ ! -e "$out" ] && [ "$(wc -l <"$T/rt.err")" -ge 1 ] && ! grep -q Sanitizer "$T/rt.err"; then ok; else bad "$m: refusal"; fi
			continue
		fi
		if grep -q '^fix .*: 0 rewrites applied' "$T/rt.txt" || grep -q REFUSED "$T/rt.txt"; then
			if grep -q REFUSED "$T/rt.txt"; then
				[ ! -e "$out" ] && ok || bad "$m: refused but written"
			elif cmp -s "$m" "$out"; then ok; else bad "$m: not byte-identical (rc $rc)"; fi
			continue
		fi
		if [ $rc -ne 0 ]; then bad "$m: exit $rc"; cat "$T/rt.err"; continue; fi
		if command -v protoc >/dev/null 2>&1; then
			protoc --decode_raw <"$out" >/dev/null 2>&1 && ok || bad "$m: protoc --decode_raw fails on the output"
		fi
		"$ANELINT" check "$out" >/dev/null 2>&1
		[ $? -le 1 ] && ok || bad "$m: the output does not re-load"
	done
}
# NeuralNetwork recurrent layers (ANE002) of the legacy builder model: its
# 1-step uniDirectionalLSTM, biDirectionalLSTM and gru (sigmoidHard gates)
# unrolled by the NeuralNetwork passes, no ML Program pass reported
# (docs/surgery.md; tests/pass_nn_gru_unroll.sh has the rest)
"$ANELINT" fix $D/builder__legacy_lstm_bilstm_gru.mlmodel --dry-run --allow reassociate --format json >"$T/nnrec.json"
rc=$?
[ $rc -eq 0 ] &&
	grep -q '"layer": "lstm", "type": "uniDirectionalLSTM", "pass": "nn-lstm-unroll", "rule": "ANE002", "class": "reassociate", "applied": true' "$T/nnrec.json" &&
	grep -q '"layer": "bilstm", "type": "biDirectionalLSTM", "pass": "nn-bilstm-unroll", "rule": "ANE002", "class": "reassociate", "applied": true' "$T/nnrec.json" &&
	grep -q '"layer": "gru", "type": "gru", "pass": "nn-gru-unroll", "rule": "ANE002", "class": "reassociate", "applied": true' "$T/nnrec.json" &&
	! grep -q '"pass": "mil-gru-unroll"' "$T/nnrec.json" && ok || { bad "nn recurrent: applied (rc $rc)"; cat "$T/nnrec.json"; }
roundtrip $D/*.mlmodel tests/data/crafted/*.mlmodel
if [ -d "$CORPUS/converted" ]; then
	roundtrip "$CORPUS"/converted/*.mlmodel
else
	skip=$((skip + 1))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
