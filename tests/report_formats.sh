#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/report_formats.sh: the report formats (docs/reports.md) beyond their golden outputs.
#   1. `-o FILE`: the format follows the extension; the file appears whole (temporary file
#      + rename) with the umask's permissions; a model that cannot be read, an unwritable
#      directory or -o naming the model leave no file (and no temporary file) behind;
#      formats a command has not are usage errors; `check --format sarif|markdown` work.
#   2. SARIF 2.1.0: every report (fixtures, hostile names, a load error, and the corpus when
#      ../shared is there) validates against the SARIF 2.1.0 JSON schema with ajv-cli, and
#      passes Microsoft's SARIF multitool `validate` without an error. Both come from the npm
#      registry, installed here into $NPM_DIR (default build/npm) on first use; without npm
#      or the registry these checks are skipped with a message.
#   3. Markdown: cmark-gfm (Debian) renders the summary of the hostile-names fixture with no
#      element, link or table cell that a name brought in; skipped without cmark-gfm.
#   4. Graphviz: `dot` (Debian graphviz) lays out every DOT report, with one cluster per
#      plan segment, and the hostile names come out as text; skipped without dot.
# tools/install-deps.sh installs cmark-gfm, graphviz and nodejs/npm.
set -u
: "${ANELINT:=build/anelint}"
: "${BUILD:=build}"
NPM_DIR=${NPM_DIR:-build/npm}
corpus=${ANELINT_CORPUS:-../shared/corpus}
pass=0 fail=0 skip=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
skipped() { echo "SKIP $1"; skip=$((skip + 1)); }
T=$(mktemp -d "${TMPDIR:-/tmp}/anelint-reports.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
ASAN_OPTIONS=${ASAN_OPTIONS-detect_leaks=1}
export ASAN_OPTIONS

POOL=tests/data/converted/pool_k15_s3__nn_ios13.mlmodel
HOSTILE=tests/data/crafted/hostile_names.mlmodel
MODELS="$POOL $HOSTILE tests/data/crafted/plan_pingpong.mlmodel tests/data/crafted/enum_pipeline.mlmodel
	tests/data/crafted/nonneural_pipeline.mlmodel tests/data/converted/cumsum__mlp_fp16.mlpackage
	tests/data/crafted/plan_mil_branches.mlpackage tests/data/converted/transformer_encoder__nn_ios13.mlmodel"

# ---------------------------------------------------------------- 1. -o FILE
umask 022
for ext in html sarif md dot json txt; do
	$ANELINT report "$POOL" -o "$T/r.$ext" 2>"$T/err"
	rc=$?
	case $ext in
	html) head -c 15 "$T/r.$ext" 2>/dev/null | grep -q '<!DOCTYPE html>' ;;
	sarif) grep -q '"version": "2.1.0"' "$T/r.$ext" 2>/dev/null ;;
	md) grep -q '^### ' "$T/r.$ext" 2>/dev/null ;;
	dot) grep -q '^digraph anelint {' "$T/r.$ext" 2>/dev/null ;;
	json) grep -q '"command": "check"' "$T/r.$ext" 2>/dev/null ;;
	txt) grep -q '^summary: ' "$T/r.$ext" 2>/dev/null ;;
	esac
	found=$?
	if [ "$rc" = 1 ] && [ "$found" = 0 ] && [ ! -s "$T/err" ]; then
		ok "report -o r.$ext writes that format"
	else
		bad "report -o r.$ext: exit $rc, format found $found: $(head -c 200 "$T/err")"
	fi
done
perm=$(stat -c %a "$T/r.html" 2>/dev/null)
[ "$perm" = 644 ] && ok "-o file mode follows the umask (644)" || bad "-o file mode $perm, want 644"
$ANELINT report --format markdown "$POOL" -o "$T/r.html" >/dev/null 2>&1
grep -q '^### ' "$T/r.html" && ok "--format wins over the extension" || bad "--format did not win over -o's extension"
$ANELINT report "$POOL" >"$T/stdout.html" 2>/dev/null
head -c 15 "$T/stdout.html" | grep -q '<!DOCTYPE html>' && ok "report without -o: HTML on stdout" ||
	bad "report without -o does not write HTML to stdout"
$ANELINT report "$POOL" -o "$T/r.unknown" >/dev/null 2>&1
rc=$?
# an extension no format writes would be HTML under a name that says otherwise: refused
[ $rc -eq 2 ] && [ ! -e "$T/r.unknown" ] && ok "report -o with an unknown extension: refused (exit 2)" ||
	bad "report -o r.unknown: exit $rc"
$ANELINT report "$POOL" -o "$T/r-no-extension" >/dev/null 2>&1
head -c 15 "$T/r-no-extension" 2>/dev/null | grep -q '<!DOCTYPE html>' && ok "report -o without an extension: HTML" ||
	bad "report -o r-no-extension is not HTML"
for f in sarif markdown; do
	$ANELINT check --format $f "$POOL" >"$T/c.$f" 2>"$T/err"
	rc=$?
	[ "$rc" = 1 ] && [ -s "$T/c.$f" ] && [ ! -s "$T/err" ] && ok "check --format $f" ||
		bad "check --format $f: exit $rc $(head -c 200 "$T/err")"
done
cmp -s "$T/c.sarif" "$T/r.sarif" && ok "check --format sarif = report -o x.sarif" ||
	bad "check --format sarif differs from report -o x.sarif"

# errors leave nothing behind: not the file, not a temporary file
mkdir "$T/out"
echo "old" >"$T/out/keep.html"
$ANELINT report tests/data/crafted/does-not-exist.mlmodel -o "$T/out/new.html" >/dev/null 2>&1
rc=$?
[ "$rc" = 4 ] && [ "$(ls -A "$T/out")" = keep.html ] && ok "missing model: exit 4, no output file" ||
	bad "missing model: exit $rc, left: $(ls -A "$T/out")"
printf 'not a model' >"$T/bad.mlmodel"
$ANELINT report "$T/bad.mlmodel" -o "$T/out/keep.html" >/dev/null 2>&1
rc=$?
[ "$rc" = 3 ] && [ "$(cat "$T/out/keep.html")" = old ] && [ "$(ls -A "$T/out")" = keep.html ] &&
	ok "invalid model: exit 3, the old file untouched" || bad "invalid model: exit $rc, left: $(ls -A "$T/out")"
$ANELINT report "$POOL" "$T/bad.mlmodel" -o "$T/out/two.html" >/dev/null 2>&1
rc=$?
[ "$rc" = 3 ] && [ ! -e "$T/out/two.html" ] && ok "one bad model of two: exit 3, no output file" ||
	bad "one bad model of two: exit $rc"
if [ "$(id -u)" != 0 ]; then
	mkdir "$T/ro" && chmod a-w "$T/ro"
	$ANELINT report "$POOL" -o "$T/ro/r.html" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" = 4 ] && [ -z "$(ls -A "$T/ro")" ] && grep -q 'cannot write' "$T/err" &&
		ok "unwritable directory: exit 4, nothing written" || bad "unwritable directory: exit $rc"
fi
$ANELINT report "$POOL" -o "$T/no/such/dir/r.html" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 4 ] && grep -q 'cannot write' "$T/err" && ok "missing directory: exit 4" || bad "missing directory: exit $rc"
cp "$POOL" "$T/m.mlmodel"
$ANELINT report "$T/m.mlmodel" -o "$T/m.mlmodel" >/dev/null 2>&1
rc=$?
cmp -s "$POOL" "$T/m.mlmodel" && [ "$rc" = 2 ] && ok "-o naming the model: usage error, model intact" ||
	bad "-o naming the model: exit $rc"
[ -z "$(find "$T" -name '.*.??????' 2>/dev/null)" ] && ok "no temporary files left" ||
	bad "temporary files left: $(find "$T" -name '.*.??????')"
for args in "info --format html" "plan --format nope" "rules --format sarif" "targets --format dot"; do
	# shellcheck disable=SC2086
	$ANELINT $args $([ "${args%% *}" = rules ] || [ "${args%% *}" = targets ] || echo "$POOL") >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] && ok "$args: usage error" || bad "$args: exit $rc, want 2"
done
$ANELINT plan --format html "$POOL" | head -c 15 | grep -q '<!DOCTYPE html>' && ok "plan --format html" ||
	bad "plan --format html"
$ANELINT report --fail-on never "$POOL" -o "$T/n.html" >/dev/null 2>&1
rc=$?
[ "$rc" = 0 ] && ok "report --fail-on never: exit 0" || bad "report --fail-on never: exit $rc"
$ANELINT report --target all --format markdown "$POOL" >"$T/all.md" 2>/dev/null
[ "$(grep -c '^| pool' "$T/all.md")" -ge 6 ] && ok "report --target all: a row per family" ||
	bad "report --target all: $(grep -c '^| pool' "$T/all.md") rows"

# ---------------------------------------------------------------- 2. SARIF 2.1.0
mkdir "$T/sarif"
n=0
for m in $MODELS "$corpus"/converted/*.mlmodel "$corpus"/converted/*.mlpackage "$corpus"/real/*.mlmodel \
	"$corpus"/real/*.mlpackage; do
	[ -e "$m" ] || continue
	n=$((n + 1))
	$ANELINT check --format sarif "$m" >"$T/sarif/m$n.json" 2>/dev/null
done
$ANELINT check --format sarif tests/data/crafted/no-such.mlmodel "$T/bad.mlmodel" "$POOL" >"$T/sarif/errors.json" 2>/dev/null
# suppressed results (the model's metadata) and paths relative to --base (SRCROOT)
$ANELINT check --format sarif --base . tests/data/crafted/ci_model_meta.mlmodel tests/data/crafted/ci_model_v2.mlmodel \
	>"$T/sarif/suppressed.json" 2>/dev/null
python3 - "$T/sarif/suppressed.json" <<'PY' && ok "SARIF: suppressions, startLine, SRCROOT" || bad "SARIF: suppressions, startLine, SRCROOT"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
res = run["results"]
sup = [r for r in res if "suppressions" in r]
assert len(sup) == 1 and sup[0]["suppressions"][0]["kind"] == "inSource", sup
assert all(l["physicalLocation"]["region"]["startLine"] == 1 for r in res for l in r["locations"])
assert all(l["physicalLocation"]["artifactLocation"]["uriBaseId"] == "SRCROOT" and
           l["physicalLocation"]["artifactLocation"]["uri"].startswith("tests/data/crafted/")
           for r in res for l in r["locations"])
assert run["originalUriBaseIds"]["SRCROOT"]["uri"].endswith("/")
rule = [x for x in run["tool"]["driver"]["rules"] if x["id"] == "ANE005"][0]
assert rule["help"]["text"].startswith("ANE005: ") and "\nWhy: " in rule["help"]["text"] and "\nFix: " in rule["help"]["text"]
PY
# the configuration's information_uri, and the columns of a cross product of lists
printf 'information_uri = "https://models.example.com/anelint-rules"\n' >"$T/uri.toml"
$ANELINT report --config "$T/uri.toml" --format sarif --target a17,m1 --os ios17,ios18 tests/data/crafted/ci_model.mlmodel \
	>"$T/sarif/uri.json" 2>/dev/null
grep -q '"informationUri": "https://models.example.com/anelint-rules"' "$T/sarif/uri.json" &&
	ok "SARIF: informationUri from the configuration" || bad "SARIF: no informationUri from the configuration"
grep -q '"executionSuccessful": false' "$T/sarif/errors.json" && ok "SARIF: load errors are tool notifications" ||
	bad "SARIF: load errors not reported"
npm_ok=0
if command -v npm >/dev/null 2>&1; then
	if [ ! -x "$NPM_DIR/node_modules/.bin/ajv" ] ||
		[ ! -e "$NPM_DIR/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool" ]; then
		mkdir -p "$NPM_DIR"
		timeout 600 npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error \
			ajv-cli@5.0.0 ajv-formats@3.0.1 @microsoft/sarif-multitool@5.7.0 >"$T/npm.log" 2>&1 ||
			echo "npm install failed: $(tail -n 3 "$T/npm.log")"
	fi
	[ -x "$NPM_DIR/node_modules/.bin/ajv" ] && npm_ok=1
else
	echo "no npm (tools/install-deps.sh installs nodejs and npm)"
fi
SCHEMA=$NPM_DIR/node_modules/@microsoft/sarif-multitool-linux/sarif-2.1.0.json
MULTITOOL=$NPM_DIR/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [ "$npm_ok" = 1 ] && [ -f "$SCHEMA" ]; then
	"$NPM_DIR/node_modules/.bin/ajv" validate --spec=draft2020 -c ajv-formats --strict=false -s "$SCHEMA" \
		-d "$T/sarif/*.json" >"$T/ajv.log" 2>&1
	valid=$(grep -c ' valid$' "$T/ajv.log")
	files=$(ls "$T/sarif" | wc -l)
	if [ "$valid" = "$files" ]; then
		ok "SARIF: $files reports valid against the SARIF 2.1.0 schema (ajv)"
	else
		bad "SARIF: $valid of $files reports valid (ajv):"
		grep -v ' valid$' "$T/ajv.log" | head -20
	fi
	# the schema check must be able to fail: a wrong version is invalid
	sed 's/"version": "2.1.0"/"version": "2.0.0"/' "$T/sarif/errors.json" >"$T/wrong.json"
	if "$NPM_DIR/node_modules/.bin/ajv" validate --spec=draft2020 -c ajv-formats --strict=false -s "$SCHEMA" \
		-d "$T/wrong.json" >/dev/null 2>&1; then
		bad "SARIF: ajv accepts a document with version 2.0.0"
	else
		ok "SARIF: ajv rejects a wrong version (the check can fail)"
	fi
else
	skipped "SARIF schema validation: ajv-cli and the SARIF schema could not be installed from the npm registry"
fi
if [ "$npm_ok" = 1 ] && [ -f "$MULTITOOL" ]; then
	chmod u+x "$MULTITOOL" 2>/dev/null # npm may not run its postinstall
	# the SARIF rules and GitHub Advanced Security's (what code scanning requires)
	DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 timeout 600 "$MULTITOOL" validate --rule-kind "Ghas;Sarif" \
		"$T"/sarif/*.json >"$T/mt.log" 2>&1
	errs=$(grep -c ': error ' "$T/mt.log")
	if ! grep -q 'Analysis completed successfully' "$T/mt.log"; then
		errs=$((errs + 1))
		tail -n 5 "$T/mt.log"
	fi
	grep ': error ' "$T/mt.log" | head -10
	[ "$errs" = 0 ] && ok "SARIF: Microsoft's SARIF multitool (rules Sarif and Ghas) validates every report without an error" ||
		bad "SARIF: $errs multitool errors"
	# its one warning (SARIF2005, no informationUri) is gone where the configuration names one
	grep -q 'sarif/m1.json.*SARIF2005' "$T/mt.log" && ! grep -q 'sarif/uri.json.*SARIF2005' "$T/mt.log" &&
		ok "SARIF: the multitool's informationUri warning only where none is given" ||
		bad "SARIF: informationUri warning (SARIF2005) not as expected"
	# the GitHub rules can fail: a result without a location is refused
	python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); d["runs"][0]["results"][0]["locations"]=[]
json.dump(d,open(sys.argv[2],"w"))' "$T/sarif/suppressed.json" "$T/noloc.sarif"
	DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 timeout 600 "$MULTITOOL" validate --rule-kind "Ghas;Sarif" \
		"$T/noloc.sarif" >"$T/mt2.log" 2>&1
	grep -q ': error GH' "$T/mt2.log" && ok "SARIF: the multitool's GitHub rules refuse a result without a location" ||
		bad "SARIF: the GitHub rules accept a result without a location"
else
	skipped "SARIF multitool: @microsoft/sarif-multitool could not be installed from the npm registry"
fi

# ---------------------------------------------------------------- 3. Markdown
if command -v cmark-gfm >/dev/null 2>&1; then
	$ANELINT report --format markdown "$HOSTILE" >"$T/h.md" 2>/dev/null
	cmark-gfm -e table -e autolink -e strikethrough "$T/h.md" >"$T/h.html"
	# our own elements only: headings, a table, lists, <details>, <sub>; no link, image or
	# script, and every fallback row has its five cells
	rows=$(grep -c '^<tr>' "$T/h.html")
	cells=$(tr -d '\n' <"$T/h.html" | sed 's|</tr>|\n|g' | grep -c '<td[ >].*<td[ >].*<td[ >].*<td[ >].*<td[ >]')
	if grep -qiE '<a |<img|<script|<b>|<i>|<code>|<del>|<style' "$T/h.html"; then
		bad "Markdown: a name made markup: $(grep -oiE '<(a|img|script|b|i|code|del|style)[ >][^<]{0,40}' "$T/h.html" | head -3)"
	elif [ "$rows" -lt 4 ] || [ "$cells" -lt 3 ]; then
		bad "Markdown: tables broken ($rows rows, $cells with 5+ cells)"
	elif ! grep -q 'onerror=alert(1)&gt;&amp;amp;' "$T/h.html"; then
		bad "Markdown: a hostile name did not come out as text"
	else
		ok "Markdown: hostile names render as text in GitHub-flavoured Markdown (cmark-gfm)"
	fi
else
	skipped "Markdown rendering: no cmark-gfm (apt-get install cmark-gfm)"
fi

# ---------------------------------------------------------------- 4. Graphviz
if command -v dot >/dev/null 2>&1; then
	errs=0 n=0
	for m in $MODELS; do
		n=$((n + 1))
		$ANELINT report --format dot "$m" >"$T/g.dot" 2>/dev/null
		$ANELINT plan --format json "$m" >"$T/g.json" 2>/dev/null
		want=$(python3 -c 'import json,sys; print(sum(x["totals"]["segments"] for x in json.load(open(sys.argv[1]))["models"]))' "$T/g.json")
		got=$(grep -c 'subgraph cluster_m[0-9]*_s' "$T/g.dot")
		if ! timeout 60 dot -Tsvg "$T/g.dot" -o "$T/g.svg" 2>"$T/dot.err" || [ "$got" != "$want" ]; then
			errs=$((errs + 1))
			echo "dot on $m: $got segment clusters, plan has $want: $(head -c 200 "$T/dot.err")"
		fi
	done
	[ "$errs" = 0 ] && ok "DOT: Graphviz lays out $n reports, one cluster per segment" || bad "DOT: $errs reports"
	$ANELINT report --format dot "$HOSTILE" >"$T/h.dot" 2>/dev/null
	if dot -Tsvg "$T/h.dot" -o "$T/h.svg" 2>"$T/dot.err" && grep -q '&lt;script&gt;alert(&quot;x&quot;)' "$T/h.svg" &&
		[ "$(grep -c '<g id="node' "$T/h.svg")" = 7 ]; then
		ok "DOT: hostile names stay inside their labels (7 nodes)"
	else
		bad "DOT: hostile names broke the graph: $(head -c 200 "$T/dot.err")"
	fi
else
	skipped "Graphviz layout: no dot (apt-get install graphviz)"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
