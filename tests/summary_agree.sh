#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/summary_agree.sh: the figures of check (text, JSON) and report (HTML,
# Markdown) agree on every model of tests/data and of the shared corpus
# (../shared/corpus; skipped when absent): layers, ANE-eligible, placed on the
# ANE, the moves by rule, the failing findings (issue 29 item 2; the work is in
# tests/summary_agree.py).
set -u
: "${ANELINT:=build/anelint}"
CORPUS=${CORPUS:-../shared/corpus}
if [ -d "$CORPUS" ]; then
	python3 tests/summary_agree.py "$ANELINT" tests/data "$CORPUS"
else
	python3 tests/summary_agree.py "$ANELINT" tests/data | sed 's/ skipped$/ skipped (and the corpus: no ..\/shared\/corpus)/'
fi
