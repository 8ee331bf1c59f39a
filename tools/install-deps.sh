#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/install-deps.sh: installs the Debian packages anelint needs to build and test.
# Safe to run again; skips packages already installed. Runs apt-get through sudo when not root.
#   build:  gcc, make, pkg-config, libjson-c-dev (Manifest.json, JSON reports)
#   tests:  libcmocka-dev (unit tests), protobuf-compiler (protoc --decode_raw cross-checks),
#           python3 (fixture generator), clang + libclang-rt-14-dev (sanitizer build),
#           strace (tests/nowrite.sh: the input is never opened for writing),
#           python3-jsonschema (tests/plan_corpus.sh validates JSON output against docs/schema/)
#   reports: chromium (tests/report_browser.sh renders the HTML report headless), graphviz
#           (tests/report_formats.sh lays out the DOT report), cmark-gfm (renders the Markdown
#           report), nodejs + npm when no npm is there (the SARIF validators come from the npm
#           registry, installed by tests/report_formats.sh into build/npm)
#   run:    libopenblas-dev (cblas_sgemm for the interpreter's matmul/conv; optional, `make BLAS=0`)
#   --bench: also python3-torch (bench/interp.py times PyTorch beside the interpreter; large)
set -eu
pkgs="gcc make pkg-config libjson-c-dev libcmocka-dev protobuf-compiler python3 clang libclang-rt-14-dev strace python3-jsonschema libopenblas-dev chromium graphviz cmark-gfm"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
[ "${1:-}" = --bench ] && pkgs="$pkgs python3-torch"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "installing:$missing"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
