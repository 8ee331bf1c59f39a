#!/bin/sh
# SPDX-License-Identifier: MIT
# nowrite.sh: anelint never opens its input for writing, nor anything else.
# Runs `anelint check` (text and JSON) and `anelint info` under strace on a few
# fixtures (.mlmodel files, .mlpackage directories, a truncated model, a
# package given with a trailing slash) and reads the trace:
#   - no open/openat/openat2 with O_WRONLY, O_RDWR, O_CREAT or O_TRUNC, and no
#     creat, on any path but /dev/null and /dev/tty;
#   - no rename*, unlink*, mkdir*, rmdir, link*, symlink*, truncate, ftruncate
#     or chmod* call at all (failed attempts count too);
#   - the input itself was opened (read-only), so an empty trace cannot pass.
# And that `fix --fsync` flushes its outputs before renaming them into place,
# and plain `fix` does not (al_set_durable_writes).
# Skips cleanly ("0 passed, 0 failed, 1 skipped") without a working strace
# (not installed, or ptrace not permitted). In a sanitizer build LeakSanitizer
# is turned off here: it cannot run under ptrace (make asan checks leaks in the
# other tests).
#
#   ANELINT=build/anelint sh tests/nowrite.sh        (from the repo root)
# Prints "ok NAME" or "FAIL NAME: why" per case, then "N passed, M failed, K skipped".

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
ANELINT=${ANELINT:-build/anelint}
case $ANELINT in /*) ;; *) ANELINT=$(pwd)/$ANELINT ;; esac

skip_all() {
	echo "skip: $1"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}

if [ ! -x "$ANELINT" ]; then
	echo "FAIL setup: $ANELINT is not an executable (build it first)"
	echo "0 passed, 1 failed"
	exit 1
fi
command -v strace >/dev/null 2>&1 || skip_all "strace is not installed (tools/install-deps.sh)"

T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-nowrite.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# The syscalls that could write, move or remove anything. Older strace builds
# may not know every name: fall back to the base list then.
WRITES=rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate,ftruncate,chmod,fchmod,fchmodat
BASE=rename,renameat,renameat2,unlink,unlinkat,mkdir,truncate,ftruncate
OPENS=open,openat,openat2,creat
TRACE=$OPENS,$WRITES
if ! strace -f -e trace="$TRACE" -o "$T/probe" true 2>/dev/null; then
	WRITES=$BASE
	TRACE=$OPENS,$WRITES
	strace -f -e trace="$TRACE" -o "$T/probe" true 2>/dev/null ||
		skip_all "strace cannot trace here (ptrace not permitted?)"
fi
grep -q 'open' "$T/probe" 2>/dev/null || skip_all "strace traced no open of 'true'"

# LeakSanitizer stops the world with ptrace, which strace already holds.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# A truncated model (made here, by the script) for the error path.
data=$root/tests/data
head -c 300 "$data/converted/gru__nn_ios14.mlmodel" >"$T/truncated.mlmodel"

# run NAME EXPECT_INPUT ARGS...: anelint ARGS under strace; judge the trace.
# EXPECT_INPUT is a file the run must have opened read-only.
run() {
	name=$1 input=$2
	shift 2
	log="$T/trace.$passed.$failed"
	strace -f -qq -e trace="$TRACE" -o "$log" "$ANELINT" "$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -ge 5 ]; then
		fail "$name" "exit $rc: $(head -c 300 "$T/err")"
		return
	fi
	# opens with a writing flag, other than /dev/null and /dev/tty
	bad=$(grep -E "^[0-9]+ +(open|openat|openat2)\(" "$log" |
		grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC' |
		grep -vE '"/dev/(null|tty)"' | head -n 3)
	if [ -n "$bad" ]; then
		fail "$name" "opened for writing: $bad"
		return
	fi
	bad=$(grep -E "^[0-9]+ +creat\(" "$log" | grep -vE '"/dev/(null|tty)"' | head -n 3)
	if [ -n "$bad" ]; then
		fail "$name" "creat: $bad"
		return
	fi
	calls=$(echo "$WRITES" | tr ',' '|')
	bad=$(grep -E "^[0-9]+ +($calls)\(" "$log" | head -n 3)
	if [ -n "$bad" ]; then
		fail "$name" "modifies the file system: $bad"
		return
	fi
	if ! grep -E "^[0-9]+ +(open|openat|openat2)\(" "$log" | grep -F "$input" | grep -q 'O_RDONLY'; then
		fail "$name" "the trace shows no read-only open of $input"
		return
	fi
	ok "$name"
}

nn=$data/converted/gru__nn_ios14.mlmodel
pipe=$data/crafted/enum_pipeline.mlmodel
pkg=$data/converted/gru__mlp_fp16.mlpackage
pkg2=$data/crafted/mil_rules.mlpackage
for cmd in "check" "check --format json" "info"; do
	# shellcheck disable=SC2086 # cmd is split on purpose
	run "$cmd $(basename "$nn")" "$nn" $cmd "$nn"
	# shellcheck disable=SC2086
	run "$cmd $(basename "$pipe")" "$pipe" $cmd "$pipe"
	# shellcheck disable=SC2086
	run "$cmd $(basename "$pkg")" "$pkg/Data/com.apple.CoreML/weights/weight.bin" $cmd "$pkg"
	# shellcheck disable=SC2086
	run "$cmd $(basename "$pkg2")/" "$pkg2/Manifest.json" $cmd "$pkg2/"
	# shellcheck disable=SC2086
	run "$cmd truncated.mlmodel" "$T/truncated.mlmodel" $cmd "$T/truncated.mlmodel"
done
# several inputs in one run
run "check, three inputs" "$pkg/Manifest.json" check "$nn" "$pkg" "$T/truncated.mlmodel"

# Durability (--fsync, al_set_durable_writes): the outputs of fix are renamed
# into place either way; only with --fsync is each file flushed first, and the
# files written are the same. Traced: fsync, fdatasync, rename*.
SYNCS=fsync,fdatasync,rename,renameat,renameat2
durable() {
	name=$1 out=$2
	shift 2
	for mode in plain fsync; do
		rm -rf "$out.$mode"
		flag=""
		[ "$mode" = fsync ] && flag=--fsync
		# shellcheck disable=SC2086 # flag is empty or one word
		strace -f -qq -e trace="$SYNCS" -o "$T/sync.$mode" "$ANELINT" fix $flag "$@" -o "$out.$mode" \
			>/dev/null 2>"$T/err"
		rc=$?
		if [ "$rc" -ge 2 ] || [ ! -e "$out.$mode" ]; then
			fail "$name $mode" "exit $rc: $(head -c 300 "$T/err")"
			return
		fi
	done
	n_plain=$(grep -cE "^[0-9]+ +f(data)?sync\(" "$T/sync.plain")
	n_sync=$(grep -cE "^[0-9]+ +f(data)?sync\(" "$T/sync.fsync")
	# the line number of the first fsync and of the last rename (into place)
	first_sync=$(grep -nE "^[0-9]+ +f(data)?sync\(" "$T/sync.fsync" | head -n 1 | cut -d: -f1)
	last_rename=$(grep -nE "^[0-9]+ +rename(at2?)?\(" "$T/sync.fsync" | tail -n 1 | cut -d: -f1)
	if [ "$n_plain" -ne 0 ]; then
		fail "$name" "$n_plain fsync calls without --fsync"
	elif [ "$n_sync" -lt 1 ] || [ -z "$last_rename" ] || [ "$first_sync" -gt "$last_rename" ]; then
		fail "$name" "--fsync: $n_sync fsync calls, first at trace line ${first_sync:-none}, last rename at ${last_rename:-none}"
	elif ! diff -r "$out.plain" "$out.fsync" >/dev/null; then
		fail "$name" "the outputs with and without --fsync differ"
	else
		ok "$name: no fsync by default, $n_sync with --fsync before the rename, same files"
	fi
}
durable "fix --fsync $(basename "$nn")" "$T/fixed.mlmodel" "$nn"
durable "fix --fsync $(basename "$pkg2")" "$T/fixed.mlpackage" "$pkg2"
# --in-place replaces the only copy: flushed without being asked
cp "$nn" "$T/inplace.mlmodel"
strace -f -qq -e trace="$SYNCS" -o "$T/sync.inplace" "$ANELINT" fix --in-place "$T/inplace.mlmodel" \
	-o "$T/inplace.mlmodel" >/dev/null 2>"$T/err"
rc=$?
n_sync=$(grep -cE "^[0-9]+ +f(data)?sync\(" "$T/sync.inplace")
if [ "$rc" -lt 2 ] && [ "$n_sync" -ge 1 ]; then
	ok "fix --in-place: $n_sync fsync calls before the input is replaced"
else
	fail "fix --in-place" "exit $rc, $n_sync fsync calls: $(head -c 300 "$T/err")"
fi

echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
