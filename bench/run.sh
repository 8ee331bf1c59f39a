#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh: benchmark `anelint check` and `anelint plan` on big models (not a test:
# nothing here is asserted). See bench/README.md.
#
#   sh bench/run.sh [ANELINT]            (default build/anelint; `make bench`)
#
# Models: a synthetic ~500 MB NeuralNetwork .mlmodel generated once into
# $BENCH_DIR (default build/bench) by tools/mkmodel.py, plus the largest
# .mlmodel and the largest .mlpackage under $CORPUS (default ../shared/corpus
# next to the repository; skipped when absent).
# For each model: `anelint check` warm (after `cat` of the model; one warm-up
# run, then $RUNS runs: min and median wall ms), cold (3 runs, the model's
# files dropped from the page cache first), peak RSS warm (GNU /usr/bin/time
# -f %M) and cold (wait4), and as the baseline `cat` of the same files into
# /dev/null, warm and cold; then `anelint plan` warm (check + partition +
# cheapest-fix search), against check.
# Environment: RUNS (default 7), BENCH_MB (default 500), BENCH_DIR, CORPUS.

# shellcheck disable=SC2046,SC2086 # timing output and file lists are split on purpose
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ANELINT=${1:-build/anelint}
case $ANELINT in /*) ;; *) ANELINT=$(pwd)/$ANELINT ;; esac
RUNS=${RUNS:-7}
BENCH_MB=${BENCH_MB:-500}
BENCH_DIR=${BENCH_DIR:-$root/build/bench}
CORPUS=${CORPUS:-$root/../shared/corpus}
TIMING="python3 $here/timing.py"

if [ ! -x "$ANELINT" ]; then
	echo "bench: $ANELINT is not an executable (run make first)" >&2
	exit 2
fi
mkdir -p "$BENCH_DIR" || exit 2

# ------------------------------------------------------------------ the models

# The synthetic model, regenerated when missing, of another size, or older
# than its generator.
synth=$BENCH_DIR/synthetic-${BENCH_MB}mb.mlmodel
if [ ! -s "$synth" ] || [ -n "$(find "$root/tools/mkmodel.py" "$root/tools/pbwire.py" -newer "$synth")" ]; then
	echo "generating $synth (once; about $BENCH_MB MB) ..."
	python3 "$root/tools/mkmodel.py" big "$synth" --mb "$BENCH_MB" >/dev/null || exit 2
fi

# bytes PATH: total size of a file, or of every file under a directory.
bytes() {
	find "$1" -type f -exec wc -c {} + | awk '$2 != "total" { n += $1 } END { print n + 0 }'
}

# largest KIND: the largest .mlmodel file (outside packages) or .mlpackage.
largest() {
	if [ "$1" = mlmodel ]; then
		find "$CORPUS" -name '*.mlpackage' -prune -o -type f -name '*.mlmodel' -print
	else
		find "$CORPUS" -type d -name '*.mlpackage' -prune -print
	fi | while IFS= read -r p; do
		echo "$(bytes "$p") $p"
	done | sort -n | tail -n 1 | cut -d ' ' -f 2-
}

models=$synth
if [ -d "$CORPUS" ]; then
	for kind in mlmodel mlpackage; do
		p=$(largest $kind)
		[ -n "$p" ] && models="$models
$p"
	done
else
	echo "note: no corpus at $CORPUS; benchmarking the synthetic model only"
fi

# ------------------------------------------------------------------ measuring

GNUTIME=
/usr/bin/time -f %M -o /dev/null true 2>/dev/null && GNUTIME=/usr/bin/time

rows=$BENCH_DIR/rows.txt
: >"$rows"
echo "anelint: $ANELINT ($("$ANELINT" --version 2>/dev/null))"
echo "runs per model: $RUNS warm (after one warm-up run), 3 cold"
echo

nl='
'
old_ifs=$IFS
IFS=$nl
for m in $models; do
	IFS=$old_ifs
	name=$(basename "$m")
	size=$(bytes "$m")
	layers=$(python3 "$root/tools/mkmodel.py" count "$m" 2>/dev/null || echo "?")
	files=$(find "$m" -type f | LC_ALL=C sort)
	echo "measuring $name ..."

	# cat cold, then warm: this leaves the whole model in the page cache, read
	# from disk by cat (how the cache got filled changes the RSS, see README).
	# $files is one path per line; model paths have no blanks.
	set -- $($TIMING --runs 3 --cold "$m" -- cat $files)
	c_cold=$2
	set -- $($TIMING --runs "$RUNS" -- cat $files)
	c_med=$2
	set -- $($TIMING --runs "$RUNS" -- "$ANELINT" check "$m")
	a_min=$1 a_med=$2 a_rss=$3 a_rc=$4
	if [ -n "$GNUTIME" ]; then
		$GNUTIME -f %M -o "$BENCH_DIR/rss" "$ANELINT" check "$m" >/dev/null 2>&1
		a_rss=$(tail -n 1 "$BENCH_DIR/rss")
	fi
	# anelint cold: the model's files dropped from the page cache before each run.
	set -- $($TIMING --runs 3 --cold "$m" -- "$ANELINT" check "$m")
	a_cold=$2 a_cold_rss=$3
	# anelint plan, warm (the page cache is still warm from the runs above)
	set -- $($TIMING --runs "$RUNS" -- "$ANELINT" plan "$m")
	p_min=$1 p_med=$2
	echo "$name $size $layers $a_rc $a_min $a_med $a_cold $c_med $c_cold $a_rss $a_cold_rss $p_min $p_med" >>"$rows"
done </dev/null
IFS=$old_ifs

# ------------------------------------------------------------------ the table

echo
awk '
BEGIN {
	fmt = "%-36s %8s %6s %4s %17s %7s %7s %8s %6s %15s %17s %6s\n"
	printf fmt, "model", "size MB", "layers", "exit", "warm ms min/med", "cold ms",
		"cat ms", "cat cold", "ratio", "RSS MB warm/cold", "plan ms min/med", "p/c"
}
{
	name = $1; if (length(name) > 36) name = substr(name, 1, 33) "..."
	ratio = ($8 > 0) ? sprintf("%.2f", $6 / $8) : "-"
	pc = ($6 > 0) ? sprintf("%.2f", $13 / $6) : "-"
	printf fmt, name, sprintf("%.1f", $2 / 1048576), $3, $4, $5 " / " $6, $7, $8, $9, ratio,
		sprintf("%.1f / %.1f", $10 / 1024, $11 / 1024), $12 " / " $13, pc
}' "$rows"

echo
echo "exit: of anelint check (0 all on the ANE, 1 something falls back; 3/4 mean the model was"
echo "      rejected, so its times are those of the error path)."
echo "layers: NN layers / MIL ops in the top-level graphs (tools/mkmodel.py count)."
echo "warm: after cat read the whole model from disk into the page cache; median of $RUNS runs."
echo "cold: the model's files dropped from the page cache (posix_fadvise DONTNEED, no root"
echo "      needed) before each of 3 runs; median. Caches below the kernel stay warm."
echo "ratio: anelint warm median / cat warm median (cat reads every byte; anelint need not)."
echo "RSS: peak resident set (GNU time %M / wait4 ru_maxrss). It counts the model's file pages"
echo "     that anelint's mmap faults in, so a warm page cache (large folios) raises it."
echo "plan: anelint plan warm (load, check, partition, cheapest-fix search; text output);"
echo "     p/c: plan warm median / check warm median."
echo
echo "targets (synthetic ~500 MB model): warm <= 50 ms, peak RSS <= 64 MB, plan <= 2x check"
awk -v synth="$(basename "$synth")" '
$1 == synth {
	printf "  warm median %s ms: %s\n", $6, ($6 <= 50 ? "met" : "NOT met")
	printf "  peak RSS warm %.1f MB: %s; cold %.1f MB: %s\n", $10 / 1024,
		($10 <= 65536 ? "met" : "NOT met"), $11 / 1024, ($11 <= 65536 ? "met" : "NOT met")
	printf "  plan warm median %s ms = %.2fx check %s ms: %s\n", $13, ($6 > 0 ? $13 / $6 : 0), $6,
		($13 <= 2 * $6 ? "met" : "NOT met")
}' "$rows"
[ -n "$GNUTIME" ] || echo "  (no GNU /usr/bin/time: RSS from wait4 in bench/timing.py)"

# fix (docs/surgery.md) against cp of the same file, warm. fix plans the rewrites,
# writes the rewritten file to a temporary file next to OUT (copy_file_range for
# the untouched bytes), re-checks and proves it mapped from there, then renames. The synthetic model's
# estimated work (~27 GFLOP) is above the 2 GFLOP threshold, so `--proof auto`
# runs the region proof (the rewritten layers of both models, 4 random input
# sets); `--proof whole` (both 500 MB models end to end) is timed for comparison.
fixout=$BENCH_DIR/fix-out.mlmodel
set -- $($TIMING --runs 3 -- "$ANELINT" fix "$synth" -o "$fixout")
fix_ms=$2
set -- $($TIMING --runs 3 -- "$ANELINT" fix "$synth" -o "$fixout" --proof whole)
whole_ms=$2
set -- $($TIMING --runs 3 -- "$ANELINT" fix "$synth" --dry-run)
dry_ms=$2
set -- $($TIMING --runs 3 -- cp "$synth" "$fixout")
cp_ms=$2
rm -f "$fixout"
echo
echo "fix vs cp ($(basename "$synth"), warm median of 3): fix $fix_ms ms (region proof; --dry-run $dry_ms ms),"
echo "  fix --proof whole $whole_ms ms, cp $cp_ms ms"
awk -v f="$fix_ms" -v c="$cp_ms" -v w="$whole_ms" 'BEGIN { r = c > 0 ? f / c : 0;
	printf "  ratio %.2fx (whole-model proof %.2fx; target <= 1.5x): %s\n", r, (c > 0 ? w / c : 0),
		(r <= 1.5 ? "met" : "NOT met (bench/README.md)") }'

exit 0
