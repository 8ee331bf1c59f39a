#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/readme_python.sh: the README's Python example (the ```python block) runs against
# the shared library built beside ANELINT (tests/readme_python.py says how: without
# coremltools, a tests/data model stands in for ct.convert's). Skips when the shared
# library or NumPy is absent, or the library is a sanitizer build.
: "${ANELINT:=build/anelint}"
dir=$(dirname "$ANELINT")
lib=
for f in "$dir"/libanelint.so.0 "$dir"/libanelint.0.dylib; do
	[ -f "$f" ] && lib=$f && break
done
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
	"$p" -c 'import numpy' >/dev/null 2>&1 && py=$p && break
done
if [ -z "$lib" ] || [ -z "$py" ]; then
	echo "skip: no shared library beside $ANELINT (make shared) or no python3 with NumPy"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
# a sanitizer build's shared library needs its runtime loaded before Python: the
# plain build runs this example (make check), the CLI tests cover the sanitizers
if grep -q __asan_init "$lib" 2>/dev/null; then
	echo "skip: $lib is a sanitizer build (Python cannot load it without its runtime)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
exec "$py" tests/readme_python.py "$lib" README.md
