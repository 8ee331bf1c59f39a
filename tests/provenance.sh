#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/provenance.sh: every fixture under tests/data has its provenance row in
# tests/data/PROVENANCE.md (its path, or its name in its directory's section, in
# backquotes): where it came from, and under which terms it may be copied. The
# evidence/, rules/ and reference/ directories are described as wholes there.
P=tests/data/PROVENANCE.md
pass=0 fail=0
for d in converted crafted invalid modern compiled observed; do
	for f in tests/data/$d/*; do
		[ -e "$f" ] || continue
		n=${f##*/}
		if grep -qF "\`$d/$n\`" "$P" || grep -qF "\`$n\`" "$P"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL tests/data/$d/$n: no row in $P"
		fi
	done
done
for d in evidence rules reference; do
	if grep -qF "\`$d/" "$P"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL tests/data/$d/: not described in $P"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
