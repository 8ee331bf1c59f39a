#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_rounds.sh: `anelint fix` runs its passes in rounds to the fixed point
# (docs/surgery.md "Rounds"), --allow accumulates, and an approximate rewrite
# has a tolerance (docs/surgery.md "Proof"):
#   - an fp32 ML Program (mil-fp16-compute, then the per-op passes on its output)
#     takes two rounds: one run writes the bytes two runs with --max-rounds 1
#     write, reports both rounds and their proofs, and no `then:` line;
#     --max-rounds 1 stops after one and counts what would still apply;
#     --dry-run reports the same; no scratch file is left behind
#   - --allow approximate --allow reassociate, and --allow reassociate,approximate,
#     allow approximate (the last one used to win); an unknown class is a usage error
#   - nn-io-fp16 on outputs outside fp16's range (crafted fix_io_range: ~1e-9 and
#     ~1e6) is refused, collapsed / overflowed, whatever --tolerance; a rewrite
#     beyond --tolerance is refused, within it written
set -u
: "${ANELINT:=build/anelint}"
D=tests/data/converted
C=tests/data/crafted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
# same_tree A B: the same files (packages) or bytes (.mlmodel)
same_tree() { diff -r "$1" "$2" >/dev/null 2>&1; }
mkdir -p "$T/tmp"
TMPDIR=$T/tmp
export TMPDIR

# 1. two rounds: one run == two runs of one round, byte for byte
for m in $D/cumsum__mlp_fp32.mlpackage $C/fix_mil_fp32.mlpackage; do
	b=$(basename "$m" .mlpackage)
	mkdir -p "$T/$b"
	"$ANELINT" fix --allow approximate --max-rounds 1 "$m" -o "$T/$b/r1.mlpackage" >"$T/$b/r1.txt" 2>&1 &&
		"$ANELINT" fix --allow approximate --max-rounds 1 "$T/$b/r1.mlpackage" -o "$T/$b/r2.mlpackage" >"$T/$b/r2.txt" 2>&1
	rc2=$?
	"$ANELINT" fix --allow approximate "$m" -o "$T/$b/one.mlpackage" >"$T/$b/one.txt" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && same_tree "$T/$b/r2.mlpackage" "$T/$b/one.mlpackage" &&
		! same_tree "$T/$b/r1.mlpackage" "$T/$b/one.mlpackage" && ok ||
		{ bad "$b: one run is not two runs of one round (rc $rc, $rc2)"; diff -r "$T/$b/r2.mlpackage" "$T/$b/one.mlpackage"; }
	# the text reports both rounds, each with its proof, and the fixed point; no then:
	[ "$(grep -c '^round [12]: [0-9]* rewrites* applied' "$T/$b/one.txt")" -eq 2 ] &&
		grep -q '^fix .*: [0-9]* rewrites applied in 2 rounds (allowed: approximate)$' "$T/$b/one.txt" &&
		[ "$(grep -c '^proof: ' "$T/$b/one.txt")" -eq 2 ] &&
		grep -q 'changed  main .*\[mil-fp16-compute, approximate' "$T/$b/one.txt" &&
		grep -q '^rounds: 2, then nothing more applies (the fixed point)$' "$T/$b/one.txt" &&
		! grep -q '^then:' "$T/$b/one.txt" "$T/$b/r1.txt" "$T/$b/r2.txt" && ok ||
		{ bad "$b: the report of two rounds"; cat "$T/$b/one.txt"; }
	# --max-rounds 1: one round, and what a second would apply
	grep -q '^rounds: stopped after 1 (--max-rounds 1): [1-9][0-9]* more rewrites* appl' "$T/$b/r1.txt" &&
		! grep -q '^round 1:' "$T/$b/r1.txt" && grep -q '^wrote ' "$T/$b/r1.txt" && ok ||
		{ bad "$b: --max-rounds 1"; cat "$T/$b/r1.txt"; }
	# JSON: the rounds, each rewrite's round, the fixed point
	"$ANELINT" fix --allow approximate "$m" -o "$T/$b/j.mlpackage" --format json >"$T/$b/one.json"
	rc=$?
	[ $rc -eq 0 ] && same_tree "$T/$b/j.mlpackage" "$T/$b/one.mlpackage" &&
		[ "$(json "$T/$b/one.json" '[r["round"] for r in j["rounds"]] == [1, 2] and j["fixed_point"] and j["pending"] == 0 and j["max_rounds"] == 8')" = True ] &&
		[ "$(json "$T/$b/one.json" 'all(r["proof"]["pass"] and r["proof"]["round"] == r["round"] for r in j["rounds"])')" = True ] &&
		[ "$(json "$T/$b/one.json" 'sorted(set(r["round"] for r in j["rewrites"] if r["applied"])) == [1, 2]')" = True ] &&
		[ "$(json "$T/$b/one.json" '[r["round"] for r in j["rewrites"] if r["pass"] == "mil-fp16-compute" and r["applied"]] == [1]')" = True ] &&
		[ "$(json "$T/$b/one.json" 'j["before"] == j["rounds"][0]["check_before"] and j["after"] == j["rounds"][1]["check_after"]')" = True ] &&
		ok || { bad "$b: JSON rounds (rc $rc)"; cat "$T/$b/one.json"; }
	"$ANELINT" fix --allow approximate --max-rounds 1 "$m" --dry-run --format json >"$T/$b/m1.json"
	[ "$(json "$T/$b/m1.json" 'len(j["rounds"]) == 1 and not j["fixed_point"] and j["pending"] > 0 and j["max_rounds"] == 1')" = True ] &&
		ok || { bad "$b: JSON --max-rounds 1"; cat "$T/$b/m1.json"; }
	# --dry-run: the same report, nothing written (and no scratch left in TMPDIR)
	"$ANELINT" fix --allow approximate "$m" --dry-run >"$T/$b/dry.txt" 2>&1
	rc=$?
	sed -e '1s/ -> [^:]*:/:/' -e '$d' "$T/$b/one.txt" >"$T/$b/one.cut"
	sed -e '$d' "$T/$b/dry.txt" >"$T/$b/dry.cut"
	[ $rc -eq 0 ] && cmp -s "$T/$b/one.cut" "$T/$b/dry.cut" && [ "$(tail -n 1 "$T/$b/dry.txt")" = "dry run: nothing written" ] &&
		[ -z "$(ls -A "$T/tmp")" ] && ok || { bad "$b: --dry-run parity (rc $rc)"; diff "$T/$b/one.cut" "$T/$b/dry.cut"; ls -A "$T/tmp"; }
	# nothing but the outputs next to them
	[ "$(ls -A "$T/$b" | grep -vc '\.txt$\|\.json$\|\.cut$\|\.mlpackage$')" -eq 0 ] && ok ||
		{ bad "$b: a scratch file was left next to the output"; ls -A "$T/$b"; }
done

# a .mlmodel in two rounds (crafted fix_shape_rounds: --shape fixes the input's range, then
# subb-to-neg-add has the static shapes it needs): each round written next to OUT, the last
# renamed into place; the same bytes as two runs, with -o, --in-place and --dry-run
sr=$C/fix_shape_rounds.mlmodel
mkdir -p "$T/sr"
"$ANELINT" fix --max-rounds 1 --shape a=default "$sr" -o "$T/sr/r1.mlmodel" >/dev/null 2>&1 &&
	"$ANELINT" fix --max-rounds 1 "$T/sr/r1.mlmodel" -o "$T/sr/r2.mlmodel" >/dev/null 2>&1
rc2=$?
"$ANELINT" fix --shape a=default "$sr" -o "$T/sr/one.mlmodel" >"$T/sr.txt" 2>&1
rc=$?
cp "$sr" "$T/sr/inplace.mlmodel"
"$ANELINT" fix --shape a=default "$T/sr/inplace.mlmodel" --in-place >"$T/sr_ip.txt" 2>&1
rci=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ $rci -eq 0 ] && cmp -s "$T/sr/r2.mlmodel" "$T/sr/one.mlmodel" &&
	cmp -s "$T/sr/one.mlmodel" "$T/sr/inplace.mlmodel" && ! cmp -s "$T/sr/r1.mlmodel" "$T/sr/one.mlmodel" &&
	grep -q '^fix .*: 2 rewrites applied in 2 rounds (allowed: exact)$' "$T/sr.txt" &&
	sed -n '/^round 2: /,$p' "$T/sr.txt" | grep -q 'changed  sub .*\[subb-to-neg-add' &&
	[ "$(ls -A "$T/sr" | sort | tr '\n' ' ')" = "inplace.mlmodel one.mlmodel r1.mlmodel r2.mlmodel " ] && ok ||
	{ bad "fix_shape_rounds: one run is not two (rc $rc, $rc2, $rci)"; cat "$T/sr.txt" "$T/sr_ip.txt"; ls -A "$T/sr"; }
"$ANELINT" fix --shape a=default "$sr" --dry-run >"$T/sr_dry.txt" 2>&1
rc=$?
sed -e '1s/ -> [^:]*:/:/' -e '$d' "$T/sr.txt" >"$T/sr.cut"
[ $rc -eq 0 ] && sed -e '$d' "$T/sr_dry.txt" | cmp -s - "$T/sr.cut" && [ -z "$(ls -A "$T/tmp")" ] && ok ||
	{ bad "fix_shape_rounds: --dry-run parity"; diff "$T/sr.cut" "$T/sr_dry.txt"; }

# a model with one round: as before, no round lines
"$ANELINT" fix $D/upsample_x4_nearest__nn_ios13.mlmodel -o "$T/up.mlmodel" >"$T/up.txt"
rc=$?
[ $rc -eq 0 ] && ! grep -q '^round\|^rounds:\|^then:' "$T/up.txt" && grep -q '^wrote ' "$T/up.txt" && ok ||
	{ bad "one round (rc $rc)"; cat "$T/up.txt"; }

# --max-rounds takes 1-64
for v in 0 65 x 2x ""; do
	"$ANELINT" fix --max-rounds "$v" $D/upsample_x4_nearest__nn_ios13.mlmodel --dry-run >"$T/mr.out" 2>"$T/mr.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^anelint: --max-rounds takes a number of rounds from 1 to 64, not '$v'$" "$T/mr.err" && ok ||
		{ bad "--max-rounds '$v' (rc $rc)"; cat "$T/mr.err"; }
done

# 2. --allow accumulates: the highest class given, repeated or as a comma list
m=$D/cumsum__mlp_fp32.mlpackage
for a in "--allow approximate --allow reassociate" "--allow reassociate --allow approximate" \
	"--allow reassociate,approximate" "--allow=approximate,exact"; do
	# shellcheck disable=SC2086
	"$ANELINT" fix $a "$m" --dry-run --format json >"$T/al.json" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ "$(json "$T/al.json" 'j["allow"]')" = approximate ] &&
		[ "$(json "$T/al.json" 'any(r["applied"] for r in j["rewrites"] if r["pass"] == "mil-fp16-compute")')" = True ] && ok ||
		{ bad "$a: approximate allowed (rc $rc)"; cat "$T/al.json"; }
done
"$ANELINT" fix --allow reassociate --allow exact "$m" --dry-run >"$T/al.txt" 2>&1
grep -q '(allowed: reassociate)$' "$T/al.txt" && ok || { bad "--allow reassociate --allow exact"; cat "$T/al.txt"; }
for a in "approximate,bogus" "reassociate," ",approximate" "approximate reassociate"; do
	"$ANELINT" fix --allow "$a" "$m" --dry-run >"$T/al.out" 2>"$T/al.err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(grep -c '^anelint: ' "$T/al.err")" -eq 1 ] &&
		grep -q "^anelint: --allow takes reassociate or approximate (a comma list, or repeated), not '$a'$" "$T/al.err" &&
		[ ! -s "$T/al.out" ] && ok || { bad "--allow '$a' (rc $rc)"; cat "$T/al.err"; }
done

# 3. the tolerance of an approximate rewrite
r=$C/fix_io_range.mlmodel
for tol in "" "--tolerance 10"; do
	# shellcheck disable=SC2086
	"$ANELINT" fix --allow approximate $tol "$r" -o "$T/ior.mlmodel" --format json >"$T/ior.json"
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$T/ior.mlmodel" ] &&
		[ "$(json "$T/ior.json" 'j["refused"] and not j["written"] and not j["proof"]["pass"]')" = True ] &&
		[ "$(json "$T/ior.json" '{o["name"]: (o["collapsed"], o["overflowed"], o["pass"]) for o in j["proof"]["outputs"]} == {"tiny": (True, False, False), "huge": (False, True, False)}')" = True ] &&
		ok || { bad "fix_io_range $tol: not refused (rc $rc)"; cat "$T/ior.json"; }
done
"$ANELINT" fix --allow approximate "$r" --dry-run >"$T/ior.txt"
rc=$?
[ $rc -eq 1 ] && grep -q '^  tiny .* rel 1  REFUSED (every value is 0 where the original.s are not: it collapsed' "$T/ior.txt" &&
	grep -q '^  huge .* REFUSED (an infinity or NaN where the original has none: it overflowed)$' "$T/ior.txt" &&
	grep -q '^REFUSED: .*; nothing written$' "$T/ior.txt" && ok || { bad "fix_io_range text (rc $rc)"; cat "$T/ior.txt"; }
# pool_k15_s3: nn-io-fp16 moves the outputs by ~2.4e-4 of max|ref|: within the
# default 1e-2, beyond --tolerance 1e-4
p=$D/pool_k15_s3__nn_ios13.mlmodel
"$ANELINT" fix --allow approximate "$p" -o "$T/pool.mlmodel" --format json >"$T/pool.json"
rc=$?
[ $rc -eq 0 ] && [ -e "$T/pool.mlmodel" ] && [ "$(json "$T/pool.json" 'j["tolerance"] == 0.01 and 1e-4 < j["proof"]["outputs"][0]["rel"] <= 1e-2')" = True ] &&
	ok || { bad "pool: within the default tolerance (rc $rc)"; cat "$T/pool.json"; }
"$ANELINT" fix --allow approximate --tolerance 1e-4 "$p" -o "$T/pool4.mlmodel" >"$T/pool4.txt"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/pool4.mlmodel" ] && grep -q ' REFUSED (beyond the tolerance 0.0001)$' "$T/pool4.txt" &&
	grep -q '^REFUSED: .*; nothing written$' "$T/pool4.txt" && ok || { bad "pool: --tolerance 1e-4 (rc $rc)"; cat "$T/pool4.txt"; }
"$ANELINT" fix --allow approximate --tolerance 1e-3 "$p" -o "$T/pool3.mlmodel" >"$T/pool3.txt"
rc=$?
[ $rc -eq 0 ] && cmp -s "$T/pool3.mlmodel" "$T/pool.mlmodel" && ok || { bad "pool: --tolerance 1e-3 (rc $rc)"; cat "$T/pool3.txt"; }
for v in 0 -1 x inf nan 1e-2x ""; do
	"$ANELINT" fix --allow approximate --tolerance "$v" "$p" --dry-run >"$T/tl.out" 2>"$T/tl.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^anelint: --tolerance takes a positive relative difference, e.g. 1e-2, not '$v'$" "$T/tl.err" && ok ||
		{ bad "--tolerance '$v' (rc $rc)"; cat "$T/tl.err"; }
done

# an exact rewrite beside a refused approximate one: the round again without the approximate
# rewrites, the refusal said, the exact rewrite written (fix_io_gap)
g=$C/fix_io_gap.mlmodel
"$ANELINT" fix --allow approximate "$g" -o "$T/gap.mlmodel" --format json >"$T/gap.json"
rc=$?
[ $rc -eq 0 ] && [ -e "$T/gap.mlmodel" ] &&
	[ "$(json "$T/gap.json" '(not j["refused"]) and j["written"] and j["allow"] == "approximate" and [r["pass"] for r in j["rewrites"] if r["applied"]] == ["global-avgpool-valid-to-same"] and "collapsed" in j["rounds"][0]["approximate_refused"] and all(o["pass"] for o in j["proof"]["outputs"])')" = True ] &&
	ok || { bad "fix_io_gap: the exact rewrite kept (rc $rc)"; cat "$T/gap.json"; }
"$ANELINT" fix --allow reassociate "$g" -o "$T/gap_r.mlmodel" >/dev/null
cmp -s "$T/gap.mlmodel" "$T/gap_r.mlmodel" && ok || bad "fix_io_gap: not what --allow reassociate writes"
"$ANELINT" fix --allow approximate "$g" --dry-run >"$T/gap.txt"
grep -q '^approximate rewrites refused by the proof (tiny: rel 1 (every value is 0 where the original.s are not: it collapsed' "$T/gap.txt" &&
	ok || { bad "fix_io_gap text"; cat "$T/gap.txt"; }

# 4. corpus (skips without ../shared): mobilenet_v2's ~6e-10 outputs collapse in fp16: its
# nn-io-fp16 is refused, its exact global-avgpool rewrite written
if [ -d "$CORPUS/converted" ]; then
	for m in mobilenet_v2__nn_ios13 mobilenet_v2__nn_ios14_w16; do
		"$ANELINT" fix --allow approximate "$CORPUS/converted/$m.mlmodel" --dry-run --format json >"$T/mb.json"
		rc=$?
		[ $rc -eq 0 ] && [ "$(json "$T/mb.json" '(not j["refused"]) and "collapsed" in j["rounds"][0]["approximate_refused"] and [r["pass"] for r in j["rewrites"] if r["applied"]] == ["global-avgpool-valid-to-same"]')" = True ] &&
			ok || { bad "$m: collapsed nn-io-fp16 not refused alone (rc $rc)"; cat "$T/mb.json"; }
	done
else
	skip=$((skip + 2))
	echo "skip: $CORPUS absent"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
