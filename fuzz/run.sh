#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/run.sh: run one libFuzzer harness and print its figures (`make fuzz` calls it
# once per harness, after `make fuzz-build` and fuzz/seed.sh).
#   sh fuzz/run.sh HARNESS SECONDS        HARNESS: mlmodel | mil | mlpackage | fix | rules |
#                                                  split | pkgwrite | config | miltext | espresso | evidence
# Environment: FUZZ_RUNS=N stops after N executions (else after SECONDS);
#              FUZZ_ARGS adds libFuzzer flags (e.g. "-jobs=2 -workers=2");
#              ANELINT_GUARD_MAPS=0 turns the text harnesses' guard-page mode off.
# Corpus: build-fuzz/corpus-HARNESS/ (new inputs are kept there across runs), read
# together with build/fuzz/seeds-HARNESS/ and tests/regress/HARNESS/. Reproducers of
# crashes, leaks, timeouts and OOMs: build-fuzz/artifacts/HARNESS-*. The whole log:
# build-fuzz/fuzz-HARNESS.log. Exits non-zero when libFuzzer found anything.
set -u
h=${1:?harness}
secs=${2:-60}
B=build-fuzz
bin=$B/fuzz_$h
[ -x "$bin" ] || { echo "fuzz: $bin is missing (make fuzz-build)"; exit 2; }
dict=fuzz/coreml.dict
case $h in
mlpackage | pkgwrite | espresso) maxlen=262144 ;;
rules) maxlen=16384 dict=fuzz/rules.dict ;;
config) maxlen=16384 dict=fuzz/config.dict ;;
evidence) maxlen=65536 dict=fuzz/evidence.dict ;;
*) maxlen=65536 ;;
esac
# The harnesses over text run in the guard-page mode (fuzz/README.md): each file
# mapped and each buffer a text parser reads ends right before a PROT_NONE page.
# They switch it on themselves; exported here too, so a log says so.
case $h in
miltext | espresso | evidence | config | rules | mlpackage)
	ANELINT_GUARD_MAPS=${ANELINT_GUARD_MAPS:-1}
	export ANELINT_GUARD_MAPS
	;;
esac
mkdir -p "$B/corpus-$h" "$B/artifacts"
set -- "$B/corpus-$h"
# fix and split take .mlmodel files and ML Programs in fuzz_mil's framing
# (fuzz/fuzz_fix.c, fuzz/fuzz_split.c); pkgwrite takes fuzz_mlpackage's framing
case $h in
fix | split) seeds="mlmodel mil" ;;
pkgwrite) seeds=mlpackage ;;
*) seeds=$h ;;
esac
# the seeds and the regress inputs of those framings, and the harness's own
case " $seeds " in *" $h "*) ;; *) regress="$seeds $h" ;; esac
for s in $seeds; do
	[ -d "build/fuzz/seeds-$s" ] && set -- "$@" "build/fuzz/seeds-$s"
done
for s in ${regress:-$seeds}; do
	[ -d "tests/regress/$s" ] && set -- "$@" "tests/regress/$s"
done
runs=
[ -n "${FUZZ_RUNS:-}" ] && runs="-runs=$FUZZ_RUNS"
log=$B/fuzz-$h.log
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" -max_total_time="$secs" $runs -max_len=$maxlen -rss_limit_mb=2048 \
	-malloc_limit_mb=512 -timeout=10 -dict=$dict -print_final_stats=1 \
	-artifact_prefix="$B/artifacts/$h-" ${FUZZ_ARGS:-} "$@" >"$log" 2>&1
rc=$?
stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
cov=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 | sed 's/.*\(cov: [0-9]*\) \(ft: [0-9]*\) \(corp: [^ ]*\).*/\1 \2 \3/')
n=$(ls "$B/artifacts" 2>/dev/null | grep -c "^$h-")
echo "fuzz $h: $(stat number_of_executed_units) execs, $(stat average_exec_per_sec) exec/s," \
	"$cov, slowest $(stat slowest_unit_time_sec) s, peak rss $(stat peak_rss_mb) MB, exit $rc, artifacts $n"
if [ "$rc" -ne 0 ]; then
	grep -E 'ERROR: |SUMMARY: |runtime error|fuzz invariant|Test unit written' "$log" | head -20
	exit 1
fi
