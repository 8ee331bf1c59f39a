#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/wasm-json-c.sh OUTDIR: json-c built for WebAssembly (make wasm), from Debian's
# source of the json-c the native build links (bookworm's libjson-c-dev 0.16-2).
# Why json-c in the page: the library reads an .mlpackage's Manifest.json and a compiled
# .mlmodelc's metadata.json / espresso net with it, and writes the JSON and SARIF reports
# with it (src/format/mlpackage.c, mlmodelc*.c, espresso.c, src/report/report_*.c), so the
# page cannot read a package nor give the CLI's JSON without it. Emscripten has no json-c
# port and Debian ships no wasm build, so it is built here from the upstream tarball
# Debian's json-c_0.16-2.dsc names, checked against the SHA-256 that .dsc signs. The
# source is fetched at build time into OUTDIR (build-wasm/), never committed. With
# JSONC_TARBALL=/path/json-c_0.16.orig.tar.gz no network is used.
# Output: OUTDIR/json-c/install/{include/json-c,lib/libjson-c.a}.
set -eu
# Debian's emscripten runs its JS tools with node and finds acorn (node-acorn) here
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
out=${1:?usage: tools/wasm-json-c.sh OUTDIR}
ver=0.16
sha=3ecaeedffd99a60b1262819f9e60d7d983844073abc74e495cb822b251904185
url=http://deb.debian.org/debian/pool/main/j/json-c/json-c_$ver.orig.tar.gz
dir=$out/json-c
[ -f "$dir/install/lib/libjson-c.a" ] && exit 0
mkdir -p "$dir"
tar=$dir/json-c_$ver.orig.tar.gz
if [ -n "${JSONC_TARBALL:-}" ]; then
	cp "$JSONC_TARBALL" "$tar"
elif [ ! -f "$tar" ]; then
	# apt-get source needs deb-src lines most systems lack: the pool file is the same
	curl -fsS -m 120 -o "$tar.part" "$url" || wget -q -O "$tar.part" "$url"
	mv "$tar.part" "$tar"
fi
echo "$sha  $tar" | sha256sum -c --quiet - || { echo "wasm-json-c: $tar: SHA-256 mismatch" >&2; rm -f "$tar"; exit 1; }
rm -rf "$dir/src" "$dir/build"
mkdir -p "$dir/src" "$dir/build"
tar -xzf "$tar" -C "$dir/src" --strip-components=1
# static, no tests, no apps; no thread-local storage (the page runs one thread)
(cd "$dir/build" && emcmake cmake ../src -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
	-DBUILD_STATIC_LIBS=ON -DBUILD_TESTING=OFF -DBUILD_APPS=OFF -DDISABLE_WERROR=ON \
	-DDISABLE_THREAD_LOCAL_STORAGE=ON -DCMAKE_INSTALL_PREFIX="$(cd .. && pwd)/install" >cmake.log 2>&1 \
	|| { cat cmake.log; exit 1; })
(cd "$dir/build" && emmake make -j2 json-c install >make.log 2>&1 || { tail -30 make.log; exit 1; })
echo "wasm-json-c: $dir/install/lib/libjson-c.a"
