#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/install/run.sh: what `make install` put in DESTDIR works as installed
# (`make install-check` runs this between install and uninstall):
#   - a C program (check_model.c) compiles and links through pkg-config against
#     the shared library (and, with --static, the static one) and checks a bundled
#     model as the CLI does;
#   - the shared library exports the public al_ API and nothing else;
#   - one version: anelint --version, al_version(), pkg-config --modversion;
#   - the man page and the completions name every option of anelint --help.
# Env: DESTDIR, PREFIX (as given to make install), ANELINT (the built CLI), CC.
set -u
: "${CC:=cc}"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
root="$DESTDIR$PREFIX"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/anelint_install_XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
model=tests/data/converted/pool_k15_s3__nn_ios13.mlmodel

for f in bin/anelint lib/libanelint.a include/anelint.h lib/pkgconfig/anelint.pc share/man/man1/anelint.1 \
	share/bash-completion/completions/anelint share/zsh/site-functions/_anelint \
	share/fish/vendor_completions.d/anelint.fish share/doc/anelint/LICENSE; do
	if [ -e "$root/$f" ]; then ok; else bad "not installed: $f"; fi
done
shlib=$(ls "$root"/lib/libanelint.so.*.*.* "$root"/lib/libanelint.*.dylib 2>/dev/null | head -n 1)
[ -n "$shlib" ] && ok || bad "no shared library in $root/lib"

# pkg-config finds the installed files under DESTDIR (the sysroot prefixes -I/-L).
export PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DESTDIR"
version=$(pkg-config --modversion anelint)
cflags=$(pkg-config --cflags anelint) libs=$(pkg-config --libs anelint)
# shellcheck disable=SC2086
if $CC -std=c11 -Wall -Werror $cflags -o "$tmp/check_model" tests/install/check_model.c $libs 2>"$tmp/cc.err"; then
	ok
else
	bad "check_model.c does not build through pkg-config ($cflags $libs):"; cat "$tmp/cc.err"
fi
if command -v ldd >/dev/null 2>&1; then
	LD_LIBRARY_PATH="$root/lib" ldd "$tmp/check_model" | grep -q "libanelint.so.[0-9]* => $root/lib/" \
		&& ok || bad "check_model is not linked to the installed shared library"
fi
out=$(LD_LIBRARY_PATH="$root/lib" DYLD_LIBRARY_PATH="$root/lib" "$tmp/check_model" "$model")
# the CLI's summary of the same model: 3 layers, 1 ANE-eligible, 0 placed
want=$("$ANELINT" check "$model" | sed -n 's/^summary: \([0-9]*\) layers, \([0-9]*\) ANE-eligible, \([0-9]*\) placed.*/\1 layers, \2 ANE-eligible, \3 placed on the ANE/p')
[ "$out" = "anelint $version: $want" ] && [ -n "$want" ] && ok || bad "check_model printed '$out', want 'anelint $version: $want'"
# statically linked: the .pc file's private libraries are what libanelint.a needs
static_libs=$(pkg-config --static --libs anelint | sed "s|-lanelint|$root/lib/libanelint.a|")
# shellcheck disable=SC2086
if $CC -std=c11 -Wall -Werror $cflags -o "$tmp/check_static" tests/install/check_model.c $static_libs 2>"$tmp/cc.err"; then
	[ "$("$tmp/check_static" "$model")" = "$out" ] && ok || bad "the static build prints something else"
else
	bad "check_model.c does not link statically with pkg-config --static ($static_libs):"; cat "$tmp/cc.err"
fi
cli_version=$("$root/bin/anelint" --version | cut -d' ' -f2)
[ "$cli_version" = "$version" ] && ok || bad "anelint --version says $cli_version, anelint.pc $version"
json_version=$("$root/bin/anelint" check --format json --fail-on never "$model" | sed -n 's/^ *"anelint": "\([^"]*\)".*/\1/p' | head -n 1)
[ "$json_version" = "$version" ] && ok || bad "the JSON report says anelint $json_version, anelint.pc $version"

# only the public API leaves the shared library
if command -v nm >/dev/null 2>&1 && [ -n "$shlib" ]; then
	case $shlib in
	*.dylib) nm -gU "$shlib" | awk '$2 ~ /^[TDBS]$/ {sub(/^_/, "", $3); print $3}' >"$tmp/exports" ;;
	*) nm -D --defined-only "$shlib" | awk '$2 ~ /^[TDBRV]$/ {print $3}' >"$tmp/exports" ;;
	esac
	n=$(wc -l <"$tmp/exports")
	others=$(grep -v '^al_' "$tmp/exports" | grep -v '^_' | head -5)
	[ "$n" -gt 50 ] && [ -z "$others" ] && ok || bad "exports $n symbols; not al_: $others"
	grep -q '^ali_' "$tmp/exports" && bad "internal ali_ symbols exported" || ok
fi

# every option of --help is in the man page and in each completion
for opt in $("$ANELINT" --help | sed -n 's/^ *\(-., \)\{0,1\}--\([a-z][a-z0-9-]*\).*/\2/p'); do
	roff=$(printf '%s' "--$opt" | sed 's/-/\\-/g') # roff escapes every '-'
	grep -qF -- "$roff" "$root/share/man/man1/anelint.1" || bad "man page lacks --$opt"
	grep -q -- "--$opt\b" "$root/share/bash-completion/completions/anelint" || bad "bash completion lacks --$opt"
	grep -q -- "'--$opt\[" "$root/share/zsh/site-functions/_anelint" || bad "zsh completion lacks --$opt"
	grep -q -- "-l $opt\b" "$root/share/fish/vendor_completions.d/anelint.fish" || bad "fish completion lacks --$opt"
	ok
done
bash -n "$root/share/bash-completion/completions/anelint" && ok || bad "bash completion does not parse"
if command -v zsh >/dev/null 2>&1; then zsh -n "$root/share/zsh/site-functions/_anelint" && ok || bad "zsh completion does not parse"; fi
if command -v fish >/dev/null 2>&1; then fish -n "$root/share/fish/vendor_completions.d/anelint.fish" && ok || bad "fish completion does not parse"; fi
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$root/share/man/man1/anelint.1" 2>"$tmp/man.err" | grep -q "max.work" && [ ! -s "$tmp/man.err" ] \
		&& ok || { bad "man -l does not render the page:"; cat "$tmp/man.err"; }
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
