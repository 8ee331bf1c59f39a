#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/install-deps.sh [--test] [--bench]: installs the Debian packages anelint needs.
# Safe to run again; skips packages already installed. Runs apt-get through sudo when not root.
#   (always) building: gcc, make, pkg-config, libjson-c-dev (Manifest.json, JSON reports)
#   --test   what the tests need (README's test command, .ci/run):
#            libcmocka-dev (unit tests), libopenblas-dev (OpenBLAS, which `anelint run`
#            loads at run time; optional otherwise: the interpreter's loops; CI tests both),
#            protobuf-compiler (protoc --decode_raw cross-checks),
#            python3 (fixture generator), clang + libclang-rt-14-dev (libFuzzer harnesses),
#            strace (tests/nowrite.sh: the input is never opened for writing),
#            python3-jsonschema (tests/plan_corpus.sh validates JSON output against docs/schema/),
#            chromium (tests/report_browser.sh renders the HTML report headless), graphviz
#            (tests/report_formats.sh lays out the DOT report), cmark-gfm (renders the Markdown
#            report), nodejs + npm when no npm is there (the SARIF validators come from the npm
#            registry, installed by tests/report_formats.sh into build/npm),
#            musl-tools (make check-musl), python3-pytest, python3-numpy, python3-setuptools,
#            python3-pip (make check-python: pytest, pip install ./python offline), zsh and
#            fish (make install-check parses the generated completions with them),
#            emscripten + binaryen (make wasm: the library as WebAssembly for web/, make check-web),
#            cmake + curl (make wasm builds json-c for WebAssembly from Debian's source: tools/wasm-json-c.sh)
#   --bench  python3-torch, python3-numpy (bench/interp.py times PyTorch beside the interpreter)
set -eu
pkgs="gcc make pkg-config libjson-c-dev"
for arg in "$@"; do
	case $arg in
	--test)
		pkgs="$pkgs libcmocka-dev libopenblas-dev protobuf-compiler python3 clang libclang-rt-14-dev strace"
		pkgs="$pkgs python3-jsonschema chromium graphviz cmark-gfm musl-tools python3-pytest python3-numpy"
		pkgs="$pkgs python3-setuptools python3-pip zsh fish emscripten binaryen cmake curl"
		command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm" ;;
	--bench) pkgs="$pkgs python3-torch python3-numpy" ;;
	*) echo "usage: sh tools/install-deps.sh [--test] [--bench]" >&2; exit 2 ;;
	esac
done
missing=""
for p in $pkgs; do
	case " $missing " in *" $p "*) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "installing:$missing"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
