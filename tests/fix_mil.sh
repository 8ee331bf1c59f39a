#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fix_mil.sh: `anelint fix` on ML Program packages (docs/surgery.md): the
# range_1d / fill / fill_like -> const, cumsum -> matmul, fp32 I/O -> fp16, SDPA split
# per head, linear / matmul runs (attention included; a symbolic sequence length too)
# -> the (B, C, 1, S) layout, per-block quantized weights -> int8 per channel (approximate)
# passes and the .mlpackage writer. Per rewrite: applied, fallbacks before > after, the proof
# (bit-identical for exact, within tolerance for reassociate), the output
# package re-loads, model.mlmodel parses (protoc --decode_raw when installed),
# weight.bin's header and every blob record are valid and every blob reference
# points at one, untouched ops / files / weight bytes are the input's. Refusals
# give their reason; nothing to rewrite gives byte-identical files; a failed
# write leaves no output and no temporary directory; the inputs never change.
# Corpus parts skip when ../shared/corpus is absent.
set -u
# Parts: `sh tests/fix_mil.sh PART...` runs those only: a pass's name (its
# tests/pass_<name>.sh runs it: mil-range-to-const ...), "writer" (the
# package writer, refusals, the passes without a wrapper here, the corpus: what
# no argument runs), or "all". Each part stands alone.
PARTS=${*:-writer}
part() { case " $PARTS " in *" all "* | *" $1 "*) return 0 ;; esac; return 1; }
: "${ANELINT:=build/anelint}"
C=tests/data/crafted
D=tests/data/converted
CORPUS=${ANELINT_CORPUS:-../shared/corpus}
T=$(mktemp -d)
# The check tables below read each op's own verdict: the fixtures are tiny, so the
# work floor (ANE071 / ANE072) would put everything on the CPU; switch it off.
printf 'id: ANE071\nfamilies: none\nprovenance: tiny fixtures\n\nid: ANE072\nfamilies: none\nprovenance: tiny fixtures\n' >"$T/nofloor.rules"
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

fallbacks() { sed -n "s/.*\"$1\": {[^}]*\"fallbacks\": \([0-9]*\).*/\1/p" "$2"; }
applied() { grep -c '"applied": true' "$1"; }
# every output of the proof in fix's JSON $1 within relative error $2 (a reassociate pass:
# the kernels may sum in another order on each side)
rel_within() { python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["proof"]["outputs"]
sys.exit(0 if o and all(x["rel"] <= float(sys.argv[2]) for x in o) else 1)' "$1" "$2"; }

# sha256 of every file under the inputs, to show they never change
inputs_sum() { find $C/fix_mil_*.mlpackage $D/cumsum__mlp_fp16.mlpackage $D/cumsum__mlp_fp32.mlpackage \
	$D/transformer_encoder__mlp_fp32.mlpackage \
	$D/full_fill_dynamic__mlp_ios17_fp16.mlpackage $D/arange_dynamic__mlp_fp16.mlpackage \
	tests/data/modern/encoder_fp16_ios17_enumerated.mlpackage tests/data/modern/encoder_fp16_ios17_rangedim.mlpackage -type f |
	sort | xargs sha256sum; }
inputs_sum >"$T/inputs.before"

# pkgcheck IN OUT REWRITTEN...: the structure of OUT against IN (python, stdlib only)
pkgcheck() {
	python3 - "$@" <<'EOF'
import os, struct, sys

def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if not c & 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        num, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        elif w == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field runs past its message")
            v = b[i:i + n]; i += n
        else:
            raise ValueError("wire type %d" % w)
        yield num, v

def get(b, num):
    return [v for n, v in fields(b) if n == num]

def ops(block, out):  # Block.operations = 3; Operation.blocks = 4
    for op in get(block, 3):
        name = ""
        for nv in get(op, 3):
            name = get(nv, 1)[0].decode(); break
        out.append((name, op))
        for blk in get(op, 4):
            ops(blk, out)

def program_ops(model):
    out = []
    for prog in get(model, 502):
        for fe in get(prog, 2):
            for fn in get(fe, 2):
                for be in get(fn, 3):
                    for blk in get(be, 2):
                        ops(blk, out)
    return out

# MIL.proto messages that can hold a Value (map entries: key 1, value 2):
# kind -> {field: kind of the sub-message}; Value field 5 is a BlobFileValue
KIDS = {"op": {2: "argmap", 4: "block", 5: "vmap"}, "block": {3: "op", 4: "vmap"},
        "argmap": {2: "arg"}, "arg": {1: "bind"}, "bind": {2: "value"}, "vmap": {2: "value"},
        "value": {3: "imm"}, "imm": {2: "list", 3: "list", 4: "dict"}, "list": {1: "value"},
        "dict": {1: "pair"}, "pair": {1: "value", 2: "value"}}

def blob_refs(msg, kind="op"):  # every blobFileValue offset below an op, in order
    refs = []
    for num, v in fields(msg):
        if kind == "value" and num == 5:
            refs.append(get(v, 2)[0])
        elif num in KIDS.get(kind, {}):
            refs += blob_refs(v, KIDS[kind][num])
    return refs

def canon(msg, w, kind="op"):  # msg with each blob reference replaced by the blob itself
    out = []
    for num, v in fields(msg):
        if kind == "value" and num == 5:
            off = get(v, 2)[0]
            dt, size = struct.unpack_from("<IQ", w, off + 4)
            v = ("blob", dt, w[off + 64:off + 64 + size])
        elif num in KIDS.get(kind, {}):
            v = canon(v, w, KIDS[kind][num])
        out.append((num, v))
    return out

def blobs(w):  # storage v2: every record at a multiple of 64
    assert len(w) >= 64, "weight.bin shorter than its header"
    count, version = struct.unpack_from("<II", w, 0)
    assert version == 2, "storage version %d" % version
    assert w[8:64] == bytes(56), "reserved header bytes not zero"
    found, off = {}, 64
    while off + 64 <= len(w):
        sent, dt, size, data = struct.unpack_from("<IIQQ", w, off)
        assert sent == 0xDEADBEEF, "no sentinel at %d" % off
        assert 1 <= dt <= 17, "blob dtype %d at %d" % (dt, off)
        assert data == off + 64, "data offset %d for metadata at %d" % (data, off)
        assert data + size <= len(w), "blob at %d runs past the end" % off
        found[off] = (dt, size)
        off = (data + size + 63) // 64 * 64
    assert count == len(found), "header counts %d blobs, %d found" % (count, len(found))
    return found

src, dst, rewritten = sys.argv[1], sys.argv[2], set(sys.argv[3:])
def files(root):
    r = []
    for d, _, fs in os.walk(root):
        r += [os.path.relpath(os.path.join(d, f), root) for f in fs]
    return set(r)
M = os.path.join("Data", "com.apple.CoreML", "model.mlmodel")
W = os.path.join("Data", "com.apple.CoreML", "weights", "weight.bin")
fi, fo = files(src), files(dst)
assert fi - fo == set(), "files missing from the output: %s" % (fi - fo)
assert fo - fi <= {W}, "unexpected new files: %s" % (fo - fi - {W})
for f in fi - {M, W}:
    assert open(os.path.join(src, f), "rb").read() == open(os.path.join(dst, f), "rb").read(), f
mi = open(os.path.join(src, M), "rb").read()
mo = open(os.path.join(dst, M), "rb").read()
oi, oo = program_ops(mi), program_ops(mo)
old = {n: op for n, op in oi}
new = dict(oo)
gone = set(os.environ.get("GONE", "").split())  # ops a rewrite may delete
wi = open(os.path.join(src, W), "rb").read() if W in fi else b""
wo = open(os.path.join(dst, W), "rb").read() if W in fo else b""
for n, op in oi:  # every op not rewritten is the input's, in order: byte for byte, or
    # with its blobs moved (weight.bin compacted) to blobs of the same bytes
    if n not in rewritten and n not in gone:
        assert n in new and (new[n] == op or canon(new[n], wo) == canon(op, wi)), "op %s changed" % n
for n in gone:
    assert n not in new, "op %s not deleted" % n
for n in rewritten:
    assert n in new and new[n] != old[n], "op %s not rewritten" % n
assert [n for n, _ in oo if n in old] == [n for n, _ in oi if n not in gone], "op order changed"
if wo:
    bo = blobs(wo)
    used = set()
    for n, op in oo:
        for r in blob_refs(op):
            assert r in bo, "op %s refers to offset %d, no blob there" % (n, r)
            used.add(r)
    # compaction: no blob that nothing refers to (the inputs have none)
    assert used == set(bo), "unreferenced blobs at %s" % sorted(set(bo) - used)
    appended = bool(wi) and wo[4:len(wi)] == wi[4:]
    if wi and appended:  # nothing dropped: the input's bytes, new blobs after them
        bi = blobs(wi)
        assert all(bo[k] == v for k, v in bi.items()), "existing blobs moved"
    print("blobs %d -> %d%s" % (len(blobs(wi)) if wi else 0, len(bo),
                                " (compacted)" if wi and not appended else ""))
else:
    assert not wi
    print("blobs 0 -> 0")
EOF
}

# loads: `anelint check` opens it (exit 0 or 1: fallbacks), and protoc parses the model
loads() {
	"$ANELINT" check "$1" >/dev/null 2>"$T/check.err"
	rc=$?
	[ $rc -le 1 ] || { echo "check exit $rc: $(cat "$T/check.err")"; return 1; }
	if command -v protoc >/dev/null 2>&1; then
		protoc --decode_raw <"$1/Data/com.apple.CoreML/model.mlmodel" >/dev/null || return 1
	fi
	return 0
}

# fixcase NAME IN OUTNAME BEFORE AFTER CLASS REWRITTEN [fix options...]
fixcase() {
	name=$1 in=$2 out="$T/$3.mlpackage" before=$4 after=$5 class=$6 rew=$7
	shift 7
	"$ANELINT" fix "$in" -o "$out" --format json "$@" >"$T/$name.json" 2>"$T/$name.err"
	rc=$?
	nrew=$(echo "$rew" | wc -w)
	if [ $rc -eq 0 ] && [ "$(applied "$T/$name.json")" -eq "$nrew" ] &&
		[ "$(fallbacks before "$T/$name.json")" = "$before" ] &&
		[ "$(fallbacks after "$T/$name.json")" = "$after" ] && [ "$before" -gt "$after" ] &&
		grep -q '"written": true' "$T/$name.json"; then ok; else
		bad "$name: rc $rc, applied $(applied "$T/$name.json"), fallbacks $(fallbacks before "$T/$name.json") -> $(fallbacks after "$T/$name.json")"
		cat "$T/$name.json" "$T/$name.err"
	fi
	# the proof: exact -> every output bit-identical; reassociate -> every output passes
	if [ "$class" = exact ]; then
		if grep -q '"identical": true' "$T/$name.json" && ! grep -q '"identical": false' "$T/$name.json"
		then ok; else bad "$name: not bit-identical"; fi
	else
		if grep -q '"pass": true, "runs"\|"proved": true, "pass": true' "$T/$name.json" &&
			! grep -q '"pass": false' "$T/$name.json"; then ok; else bad "$name: proof"; fi
	fi
	loads "$out" && ok || bad "$name: the output does not load"
	# shellcheck disable=SC2086
	pkgcheck "$in" "$out" $rew >"$T/$name.pkg" 2>&1 && ok || { bad "$name: package check"; cat "$T/$name.pkg"; }
}

same_tree() { diff -r "$1" "$2" >/dev/null && [ "$(cd "$1" && find . | sort)" = "$(cd "$2" && find . | sort)" ]; }

if part mil-range-to-const; then
# 1. range_1d of constants: r16 -> blob, r4 -> immediate; r3 not exact in fp16
fixcase range $C/fix_mil_range.mlpackage range 3 1 exact "r16 r4"
grep -q '"layer": "r3".*"why_not": "value 3 (0.299926758) is not exact in fp16"' "$T/range.json" && ok ||
	bad "range: r3 reason"
grep -q 'blobs 0 -> 1' "$T/range.pkg" && ok || bad "range: $(cat "$T/range.pkg") (1 new blob expected)"
"$ANELINT" check --all --consts "$T/range.mlpackage" | grep -q ' r16 .*const' && ok || bad "range: r16 is not a const"
fi

if part mil-fill-to-const; then
# 2. fill of constants, into a package whose weight.bin already has a blob
fixcase fill $C/fix_mil_fill.mlpackage fill 2 1 exact "f"
grep -q '"layer": "g".*"why_not": "'"'"'value'"'"' is vmax, computed at run time: the result is dynamic"' "$T/fill.json" &&
	ok || bad "fill: the dynamic fill's reason"
grep -q 'blobs 1 -> 2' "$T/fill.pkg" && ok || bad "fill: $(cat "$T/fill.pkg") (1 -> 2 expected)"
fi

if part mil-fill-like-to-const; then
# 3. fill_like of a static shape (one with the default value 0.0, fp32)
fixcase fill_like $C/fix_mil_fill_like.mlpackage fill_like 5 3 exact "f g"
fi

if part mil-cumsum-to-matmul; then
# 4. cumsum variants (exclusive, reverse, both; axis 0 refused)
fixcase cumsum $C/fix_mil_cumsum.mlpackage cumsum 4 1 reassociate "c0 c1 c2" --allow reassociate
grep -q '"layer": "c3".*not one of the last two' "$T/cumsum.json" && ok || bad "cumsum: c3 reason"
grep -q 'blobs 0 -> 3' "$T/cumsum.pkg" && ok || bad "cumsum: $(cat "$T/cumsum.pkg")"
# the reassociation is visible: some output is not bit-identical, yet within tolerance
grep -q '"identical": false' "$T/cumsum.json" && ok || bad "cumsum: every output bit-identical (a matmul that did not change anything?)"

# 5. converted cumsum (fp16 program, fp32 I/O casts stay; up to iOS 18 they fall back, ANE030)
fixcase cumsum_conv $D/cumsum__mlp_fp16.mlpackage cumsum_conv 4 2 reassociate "var_4_cast_fp16 var_7_cast_fp16" --allow reassociate --os ios18
n=$("$ANELINT" check --all --rules "$T/nofloor.rules" "$T/cumsum_conv.mlpackage" | grep -cE '^ +[0-9]+ +var_[47]_cast_fp16 +matmul +ANE')
[ "$n" -eq 2 ] && ok || bad "cumsum_conv: $n matmul ops (2 expected)"
fi

if part mil-io-fp16; then
# 5b. fp32 model I/O -> fp16 (approximate, opt-in): the boundary casts become
#     identity ops, the description and the function input fp16, spec 6 -> 7
fixcase io $D/cumsum__mlp_fp16.mlpackage io 4 0 approximate "x_to_fp16 var_4_cast_fp16 var_7_cast_fp16 var_9" --allow approximate --os macos15
# from iOS 26 the casts run on the ANE (ANE068, a warning): the pass still applies, 2 -> 0 fall back
fixcase io27 $D/cumsum__mlp_fp16.mlpackage io27 2 0 approximate "x_to_fp16 var_4_cast_fp16 var_7_cast_fp16 var_9" --allow approximate
"$ANELINT" info "$T/io.mlpackage" >"$T/io.info"
grep -q 'spec 7 ' "$T/io.info" && grep -q 'x: multiArray fp16 \[1, 16, 32\]' "$T/io.info" &&
	grep -q 'var_9: multiArray fp16' "$T/io.info" && grep -q 'identity 2' "$T/io.info" && ok ||
	{ bad "io: the description"; cat "$T/io.info"; }
"$ANELINT" fix $D/cumsum__mlp_fp16.mlpackage --dry-run --format json --allow reassociate --os ios18 >"$T/io0.json" 2>&1
grep -q '"layer": "x_to_fp16".*"why_not": "changes results: needs --allow approximate' "$T/io0.json" &&
	ok || bad "io: not refused without --allow approximate"
fi


if part mil-linear-split-cap; then
# 5c. a linear over the ANE axis cap (an LM head, ANE061): 16400 features -> 2
#     linear slices of 8200 (4 new blobs: their weight rows and bias) + concat; the
#     concat still exceeds the cap and stays off (named in the report), the
#     slices do not; class reassociate (a matrix kernel's summation order follows
#     its tiling), bit-identical in the interpreter here; without --allow
#     reassociate it is reported only; a linear of 8 features left
L=$C/fix_mil_lmhead.mlpackage
"$ANELINT" fix "$L" -o "$T/lm.mlpackage" --allow reassociate --format json >"$T/lm.json" 2>"$T/lm.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '"pass": "mil-linear-split-cap", "rule": "ANE061", "class": "reassociate", "applied": true' "$T/lm.json" &&
	grep -q '"identical": true' "$T/lm.json" && ! grep -q '"identical": false' "$T/lm.json" &&
	grep -q '"written": true' "$T/lm.json"; then ok; else bad "lmhead (rc $rc)"; cat "$T/lm.json" "$T/lm.err"; fi
loads "$T/lm.mlpackage" && ok || bad "lmhead: the output does not load"
pkgcheck "$L" "$T/lm.mlpackage" logits >"$T/lm.pkg" 2>&1 && grep -q 'blobs 2 -> 6' "$T/lm.pkg" && ok ||
	{ bad "lmhead: package check"; cat "$T/lm.pkg"; }
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/lm.mlpackage" >"$T/lm.check"
n=$(grep -cE ' logits_part[01] +linear +\[1,4,8200\] +[0-9.]+[kMG]? +ANE' "$T/lm.check")
[ "$n" -eq 2 ] && grep -qE ' logits +concat +\[1,4,16400\] .*ANE061' "$T/lm.check" && ok ||
	{ bad "lmhead: $n slices on the ANE (2 expected), the concat off"; cat "$T/lm.check"; }
grep -q '"layer": "small".*"why_not": "[^"]*8 output features fit the ANE.s axis cap (16384)' "$T/lm.json" && ok ||
	bad "lmhead: small not left with its reason"
"$ANELINT" fix "$L" --dry-run --proof region --allow reassociate --format json >"$T/lmr.json"
[ $? -eq 0 ] && grep -q '"kind": "region"' "$T/lmr.json" && grep -q '"proved": true, "pass": true' "$T/lmr.json" && ok ||
	{ bad "lmhead: region proof"; cat "$T/lmr.json"; }
"$ANELINT" fix "$L" -o "$T/lm0.mlpackage" --format json >"$T/lm0.json"
[ $? -eq 0 ] && grep -q '"layer": "logits".*"why_not": "[^"]*rounds differently: needs --allow reassociate (it would be: 2 linear slices' "$T/lm0.json" &&
	same_tree "$L" "$T/lm0.mlpackage" && ok || { bad "lmhead without --allow"; cat "$T/lm0.json"; }
fi

if part mil-upsample-x2-chain; then
# 5d. upsample_nearest_neighbor x4 / x8x2 -> chains of x2 ops (ANE027 on a14), bit-identical;
#     3x3 (not a power of two) and 2x2 (no chain needed) left
fixcase upsample $C/fix_mil_upsample.mlpackage upsample 3 1 exact "up4 up82"
grep -q '"layer": "up3".*"why_not": "scale factors 3x3 are not powers of two up to 64"' "$T/upsample.json" && ok ||
	bad "upsample: up3 reason"
n=$("$ANELINT" check --all "$T/upsample.mlpackage" | grep -c 'upsample_nearest_neig')
[ "$n" -eq 7 ] && ok || bad "upsample: $n upsample ops (2 + 3 + up3 + up2 = 7 expected)"
fi

if part mil-sdpa-split-heads; then
# 5e. scaled_dot_product_attention -> the per-head split-einsum form (ANE067 from iOS 18):
#     ya (4 heads, E 16, a per-head fp16 mask input: transposed once, split per
#     head) and yb (E 32: the scale as two fp16 factors) rewritten, each head's
#     softmax on the channel axis of [B, S, 1, L]; yc (a bool mask) and yd (E 48:
#     no two fp16 factors within 2^-20 of 1/sqrt(48)) left with their reasons;
#     the region proof agrees; --dry-run reports the same; without --allow
#     reassociate it is reported only and the output is the input
S=$C/fix_mil_sdpa.mlpackage
fixcase sdpa "$S" sdpa 4 2 reassociate "ya yb" --allow reassociate
grep -q '"layer": "yc".*"why_not": "attn_mask is bool: a bool mask would need a select per head' "$T/sdpa.json" && ok ||
	bad "sdpa: yc reason"
grep -q '"layer": "yd".*"why_not": "1/sqrt(48) is not exact in fp16 and no two fp16 factors' "$T/sdpa.json" && ok ||
	bad "sdpa: yd reason"
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/sdpa.mlpackage" >"$T/sdpa.chk"
n=$(grep -cE ' ya_weights_h[0-3] +softmax +\[1,8,1,6\] .*ANE' "$T/sdpa.chk")
m=$(grep -cE ' yb_weights_h[01] +softmax +\[1,7,1,5\] .*ANE' "$T/sdpa.chk")
[ "$n" -eq 4 ] && [ "$m" -eq 2 ] && grep -qE ' ya +concat +\[1,4,6,16\] .*ANE' "$T/sdpa.chk" &&
	[ "$(grep -cE 'at~ .*-> cpu\?? +\[[AMG?]\] +ANE067' "$T/sdpa.chk")" -eq 2 ] && ok || { bad "sdpa: $n + $m softmax ops on the ANE (4 + 2)"; cat "$T/sdpa.chk"; }
"$ANELINT" fix "$S" --dry-run --proof region --allow reassociate --format json >"$T/sdpar.json"
[ $? -eq 0 ] && grep -q '"kind": "region"' "$T/sdpar.json" && grep -q '"proved": true, "pass": true' "$T/sdpar.json" &&
	[ "$(applied "$T/sdpar.json")" -eq 2 ] && [ "$(fallbacks after "$T/sdpar.json")" = 2 ] && ok ||
	{ bad "sdpa: region proof / dry run"; cat "$T/sdpar.json"; }
"$ANELINT" fix "$S" -o "$T/sdpa0.mlpackage" --format json >"$T/sdpa0.json"
[ $? -eq 0 ] && grep -q '"layer": "ya".*"why_not": "rounds differently: needs --allow reassociate (it would be: 4 heads' "$T/sdpa0.json" &&
	same_tree "$S" "$T/sdpa0.mlpackage" && ok || { bad "sdpa without --allow"; cat "$T/sdpa0.json"; }
fi

if part mil-block-bc1s-conv; then
# 5f. a feed-forward block -> the (B, C, 1, S) layout (mil-block-bc1s-conv): the run
#     linear h1, gelu, linear h2, add x, layer_norm y becomes x converted once
#     (reshape + transpose), 2 1x1 convs on the linears' own blobs (declared
#     [N, K, 1, 1]: weight.bin unchanged, the old weight consts deleted), gelu,
#     add and layer_norm over axis 1 in [1, C, 1, 8], y converted back once under
#     its own name; h2 is reported as in h1's run, the lone linear l3 and the
#     immediate-weight li are left with their reasons; the fallback count does
#     not change (no rule predicts a linear off the ANE: the layout is Apple's
#     advice, ANE062's fix); without --allow reassociate it is reported only
B=$C/fix_mil_bc1s.mlpackage
"$ANELINT" fix "$B" -o "$T/bc1s.mlpackage" --allow reassociate --format json >"$T/bc1s.json" 2>"$T/bc1s.err"
rc=$?
[ $rc -eq 0 ] && [ "$(applied "$T/bc1s.json")" -eq 1 ] &&
	grep -q '"pass": "mil-block-bc1s-conv", "rule": "ANE062", "class": "reassociate", "applied": true' "$T/bc1s.json" &&
	grep -q '"proved": true, "pass": true' "$T/bc1s.json" && grep -q '"written": true' "$T/bc1s.json" && ok ||
	{ bad "bc1s (rc $rc)"; cat "$T/bc1s.json" "$T/bc1s.err"; }
loads "$T/bc1s.mlpackage" && ok || bad "bc1s: the output does not load"
GONE="h1 g h2 r w1 w2 axes" pkgcheck "$B" "$T/bc1s.mlpackage" y >"$T/bc1s.pkg" 2>&1 && grep -q 'blobs 7 -> 7' "$T/bc1s.pkg" && ok ||
	{ bad "bc1s: package check"; cat "$T/bc1s.pkg"; }
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/bc1s.mlpackage" >"$T/bc1s.chk"
grep -qE ' h1_bc1s +conv +\[1,32,1,8\] .* ANE' "$T/bc1s.chk" && grep -qE ' h2_bc1s +conv +\[1,16,1,8\] .* ANE' "$T/bc1s.chk" &&
	grep -qE ' y_bc1s +layer_norm +\[1,16,1,8\] .* ANE' "$T/bc1s.chk" &&
	[ "$(grep -cE ' (transpose|reshape) ' "$T/bc1s.chk")" -eq 6 ] && [ "$(grep -cE ' linear ' "$T/bc1s.chk")" -eq 2 ] &&
	grep -qE 'summary: 14 ops .*14 on the ANE' "$T/bc1s.chk" && ok || { bad "bc1s: the rewritten ops"; cat "$T/bc1s.chk"; }
grep -q '"layer": "h2".*"why_not": "[^"]*mil-block-bc1s-conv: in the run of .h1. (rewritten with it)"' "$T/bc1s.json" && ok ||
	bad "bc1s: h2 not reported in h1's run"
grep -q '"layer": "l3".*"why_not": "[^"]*a lone linear (the next op, z (reshape), does not work' "$T/bc1s.json" && ok ||
	bad "bc1s: l3 reason"
grep -q '"layer": "li".*"why_not": "[^"]*the weight (and bias) are not constants in weight.bin' "$T/bc1s.json" && ok ||
	bad "bc1s: li reason"
"$ANELINT" fix "$B" --dry-run --allow reassociate --format json >"$T/bc1sd.json"
[ $? -eq 0 ] && [ "$(applied "$T/bc1sd.json")" -eq 1 ] && grep -q '"proved": true, "pass": true' "$T/bc1sd.json" &&
	grep -q '"written": false' "$T/bc1sd.json" && ok || { bad "bc1s: dry run"; cat "$T/bc1sd.json"; }
"$ANELINT" fix "$B" -o "$T/bc1s0.mlpackage" --format json >"$T/bc1s0.json"
[ $? -eq 0 ] && grep -q '"layer": "h1".*"why_not": "[^"]*mil-block-bc1s-conv: rounds differently: needs --allow reassociate (it would be: a run of 5 ops' "$T/bc1s0.json" &&
	same_tree "$B" "$T/bc1s0.mlpackage" && ok || { bad "bc1s without --allow"; cat "$T/bc1s0.json"; }
# the converted PyTorch encoder layer: its sequence-first attention (from the
# transpose to [S, B, C]) and its feed-forward half go into the layout in one run
# from the in-projection (tests/pass_mil_layout_seqfirst.sh has the details)
E=$D/transformer_encoder__mlp_ios17_fp16.mlpackage
"$ANELINT" fix "$E" -o "$T/enc.mlpackage" --allow reassociate --format json >"$T/enc.json" 2>"$T/enc.err"
[ $? -eq 0 ] && grep -q '"layer": "linear_0_cast_fp16".*"applied": true' "$T/enc.json" &&
	grep -q '"layer": "linear_2_cast_fp16".*"why_not": "[^"]*in the run of .linear_0_cast_fp16.' "$T/enc.json" &&
	grep -q '"proved": true, "pass": true' "$T/enc.json" && loads "$T/enc.mlpackage" && ok ||
	{ bad "bc1s: transformer_encoder__mlp_ios17_fp16"; cat "$T/enc.json" "$T/enc.err"; }
fi

if part mil-matmul-const-bc1s-conv; then
# 5f2. matmul by a constant weight (mil-matmul-const-bc1s-conv): ma (x @ [16,32], the
#     weight copied once transposed: one new blob, the old one dropped) and mb (g @
#     [16,32]^T, its blob as it is) -> 1x1 convs in the run with gelu and add; the weight consts and the
#     transpose_y const only mb read are deleted; mi (an immediate weight) refused;
#     within 1e-6 (reassociate: the conv is another sgemm shape, which OpenBLAS's
#     Haswell / Zen kernels round differently, max_abs 4.8e-7 there; bit-identical
#     on SkylakeX); --dry-run and no --allow report the same run
M=$C/fix_mil_matmul.mlpackage
"$ANELINT" fix "$M" -o "$T/mm.mlpackage" --allow reassociate --format json >"$T/mm.json" 2>"$T/mm.err"
[ $? -eq 0 ] && [ "$(applied "$T/mm.json")" -eq 1 ] &&
	grep -q '"layer": "ma", "type": "matmul", "pass": "mil-matmul-const-bc1s-conv", "rule": "ANE062", "class": "reassociate", "applied": true' "$T/mm.json" &&
	grep -q '"proved": true, "pass": true' "$T/mm.json" && rel_within "$T/mm.json" 1e-6 && ok ||
	{ bad "matmul (rc $?)"; cat "$T/mm.json" "$T/mm.err"; }
loads "$T/mm.mlpackage" && ok || bad "matmul: the output does not load"
GONE="ma g mb wa wb no yes" pkgcheck "$M" "$T/mm.mlpackage" y >"$T/mm.pkg" 2>&1 && grep -q 'blobs 2 -> 2 (compacted)' "$T/mm.pkg" && ok ||
	{ bad "matmul: package check"; cat "$T/mm.pkg"; }
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/mm.mlpackage" >"$T/mm.chk"
grep -qE ' ma_bc1s +conv +\[1,32,1,8\] .* ANE' "$T/mm.chk" && grep -qE ' mb_bc1s +conv +\[1,16,1,8\] .* ANE' "$T/mm.chk" &&
	grep -qE ' mi +matmul ' "$T/mm.chk" && [ "$(grep -cE ' matmul ' "$T/mm.chk")" -eq 1 ] && ok ||
	{ bad "matmul: the rewritten ops"; cat "$T/mm.chk"; }
grep -q '"layer": "mb".*"why_not": "in the run of .ma. (rewritten with it)"' "$T/mm.json" &&
	grep -q '"layer": "mi".*"why_not": "not a \[B, S, K\] value by a constant \[K, N\] weight in weight.bin"' "$T/mm.json" &&
	ok || bad "matmul: mb / mi reasons"
"$ANELINT" fix "$M" --dry-run --allow reassociate --format json >"$T/mmd.json"
[ $? -eq 0 ] && [ "$(applied "$T/mmd.json")" -eq 1 ] && grep -q '"proved": true, "pass": true' "$T/mmd.json" &&
	grep -q '"written": false' "$T/mmd.json" && ok || { bad "matmul: dry run"; cat "$T/mmd.json"; }
"$ANELINT" fix "$M" -o "$T/mm0.mlpackage" --format json >"$T/mm0.json"
[ $? -eq 0 ] && grep -q '"layer": "ma".*"why_not": "rounds differently: needs --allow reassociate (it would be: a run of 4 ops (2 linear' "$T/mm0.json" &&
	same_tree "$M" "$T/mm0.mlpackage" && ok || { bad "matmul without --allow"; cat "$T/mm0.json"; }
fi

if part mil-block-bc1s-conv; then
# 5f3. self-attention carried through the layout: the first block of fix_mil_attn
#     (q / k / v linears, reshapes to heads, 4 transposes, 2 matmuls, scale,
#     softmax, reshape back, out projection, residual) is one run: the 4 transposes
#     dropped, the scores as matmul(k^T, q) [1,2,8,8] with the softmax on axis 2,
#     one conversion in and one out: 34 ops before and after, bit-identical; the
#     second block's attention weights are a model output, so its heads cannot stay
#     in the layout: its linears are refused, with the reason
A=$C/fix_mil_attn.mlpackage
"$ANELINT" fix "$A" -o "$T/attn.mlpackage" --allow reassociate --format json >"$T/attn.json" 2>"$T/attn.err"
[ $? -eq 0 ] && [ "$(applied "$T/attn.json")" -eq 1 ] &&
	grep -q '"layer": "lq".*"applied": true, "after": "a run of 17 ops (4 -> 1x1 conv, 11 of attention, 4 transposes dropped) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/attn.json" &&
	grep -q '"proved": true, "pass": true' "$T/attn.json" && rel_within "$T/attn.json" 1e-6 && ok ||
	{ bad "attn"; cat "$T/attn.json" "$T/attn.err"; }
loads "$T/attn.mlpackage" && ok || bad "attn: the output does not load"
GONE="lq rq lk rk lv rv tk tq s a p tv c tc j lo" pkgcheck "$A" "$T/attn.mlpackage" y >"$T/attn.pkg" 2>&1 &&
	grep -q 'blobs 8 -> 8' "$T/attn.pkg" && ok || { bad "attn: package check"; cat "$T/attn.pkg"; }
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/attn.mlpackage" >"$T/attn.chk"
grep -qE ' s_bc1s +matmul +\[1,2,8,8\] .* ANE' "$T/attn.chk" && grep -qE ' c_bc1s +matmul +\[1,2,8,8\] .* ANE' "$T/attn.chk" &&
	grep -qE ' rq_bc1s +reshape +\[1,2,8,8\] .* ANE' "$T/attn.chk" && grep -qE ' j_bc1s +reshape +\[1,16,1,8\] .* ANE' "$T/attn.chk" &&
	[ "$(grep -cE ' transpose ' "$T/attn.chk")" -eq 6 ] && [ "$(grep -cE ' conv ' "$T/attn.chk")" -eq 4 ] &&
	grep -qE 'summary: 34 ops .*34 on the ANE' "$T/attn.chk" && ok || { bad "attn: the rewritten ops"; cat "$T/attn.chk"; }
"$ANELINT" info -f mil "$T/attn.mlpackage" | grep -q "p_bc1s = softmax(.*axis = lq_axis_keys" &&
	"$ANELINT" info -f mil "$T/attn.mlpackage" | grep -q 'lq_axis_keys = const()\[name = tensor<string, \[\]>("lq_axis_keys"), val = tensor<int32, \[\]>(2)\]' &&
	ok || bad "attn: the softmax is not over axis 2"
grep -q '"layer": "lq2".*"why_not": "[^"]*a lone linear (the run ends before rq2 (reshape): a value in the heads / scores form would leave it)' "$T/attn.json" &&
	grep -q '"layer": "lk".*"why_not": "[^"]*in the run of .lq. (rewritten with it)' "$T/attn.json" && ok || bad "attn: lq2 / lk reasons"
"$ANELINT" fix "$A" --dry-run --allow reassociate --format json >"$T/attnd.json"
[ $? -eq 0 ] && [ "$(applied "$T/attnd.json")" -eq 1 ] && grep -q '"proved": true, "pass": true' "$T/attnd.json" &&
	grep -q '"written": false' "$T/attnd.json" && ok || { bad "attn: dry run"; cat "$T/attnd.json"; }
# the corpus encoder (2 layers, 4 heads): one run of all 46 ops, 8 transposes dropped,
# 46 -> 42 ops, within 1e-6 (bit-identical before the softmax and matmul kernels changed)
EN=$CORPUS/modern/encoder_fp16_ios17.mlpackage
if [ -d "$EN" ]; then
	"$ANELINT" fix "$EN" -o "$T/encm.mlpackage" --allow reassociate --format json >"$T/encm.json" 2>"$T/encm.err"
	[ $? -eq 0 ] && grep -q '"after": "a run of 46 ops (12 -> 1x1 conv, 22 of attention, 8 transposes dropped)' "$T/encm.json" &&
		grep -q '"proved": true, "pass": true' "$T/encm.json" && rel_within "$T/encm.json" 1e-6 &&
		"$ANELINT" check --all "$T/encm.mlpackage" | grep -q 'summary: 42 ops' && ok ||
		{ bad "attn: $EN"; cat "$T/encm.json" "$T/encm.err"; }
else
	skip=$((skip + 1))
fi

# 5f3b. a symbolic sequence length (mil-block-bc1s-conv on flexible inputs): the run
#     reshapes with -1 on the sequence axis and declares it unknown ("?"), so no op
#     of it depends on a concrete S; the model's description (its enumerated shapes,
#     its range) is kept byte for byte; the proof runs the whole models at the
#     default shape and at every other enumerated shape / the range's bounds.
#     fix_mil_flex: xs [1, ?, 16] (enumerated 8, 4) -> applied, 10 -> 14 ops,
#     0 -> 2 transposes, within 1e-6 at 3 points (bit-identical where the core type's
#     sgemm rounds both shapes alike); xb [?, 8, 16] (a batch range)
#     refused with its reason. The corpus encoder with enumerated shapes (copied to
#     tests/data/modern): 46 -> 42 ops, 8 -> 2 transposes, within 1e-6 at 16, 32
#     and 64 positions, and at 16 and 32 the rewritten model matches PyTorch's
#     outputs; the RangeDim one: at 64, 8 and 128, and PyTorch's at 37 and 128.
# same_desc IN OUT: Model.description (field 2) byte for byte the input's
same_desc() { python3 - "$1" "$2" <<'EOF2'
import sys
def desc(p):
    b = open(p + "/Data/com.apple.CoreML/model.mlmodel", "rb").read()
    i = 0
    while i < len(b):
        k = 0; s = 0
        while True:
            c = b[i]; i += 1; k |= (c & 0x7F) << s; s += 7
            if not c & 0x80: break
        num, w = k >> 3, k & 7
        if w == 0:
            while b[i] & 0x80: i += 1
            i += 1; continue
        assert w == 2, w
        n = 0; s = 0
        while True:
            c = b[i]; i += 1; n |= (c & 0x7F) << s; s += 7
            if not c & 0x80: break
        if num == 2:
            return b[i:i + n]
        i += n
sys.exit(0 if desc(sys.argv[1]) == desc(sys.argv[2]) and desc(sys.argv[1]) else 1)
EOF2
}
# ops / transposes of a package: "N T" from check --all
op_counts() { "$ANELINT" check --all "$1" >"$T/oc.txt"; echo "$(sed -n 's/^summary: \([0-9]*\) ops.*/\1/p' "$T/oc.txt") $(grep -cE ' transpose ' "$T/oc.txt")"; }
FX=$C/fix_mil_flex.mlpackage
"$ANELINT" fix "$FX" -o "$T/flex.mlpackage" --allow reassociate --format json >"$T/flex.json" 2>"$T/flex.err"
[ $? -eq 0 ] && [ "$(applied "$T/flex.json")" -eq 1 ] &&
	grep -q '"layer": "h1s".*"applied": true, "after": "a run of 5 ops (2 linear -> 1x1 conv) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/flex.json" &&
	grep -q '"proved": true, "pass": true' "$T/flex.json" && rel_within "$T/flex.json" 1e-6 &&
	grep -q '"shapes": "default xs=1,8,16 xb=2,8,16; xs=1,4,16 xb=1,8,16; xb=4,8,16: 3 shapes proved' "$T/flex.json" && ok ||
	{ bad "flex: xs's run"; cat "$T/flex.json" "$T/flex.err"; }
grep -q '"layer": "h1b".*"why_not": "[^"]*mil-block-bc1s-conv: the output.s batch axis is symbolic (a flexible input shape): only the sequence axis may be"' "$T/flex.json" &&
	grep -q '"layer": "h2b".*"why_not": "[^"]*mil-block-bc1s-conv: the output.s batch axis is symbolic' "$T/flex.json" &&
	grep -q '"layer": "h1s".*mil-linear-split-cap\|"layer": "h2s".*"why_not": "mil-linear-split-cap: 16 output features fit' "$T/flex.json" && ok ||
	bad "flex: the symbolic batch's reason"
loads "$T/flex.mlpackage" && same_desc "$FX" "$T/flex.mlpackage" && ok || bad "flex: the output does not load or its description changed"
GONE="h1s gs h2s rs" pkgcheck "$FX" "$T/flex.mlpackage" ys >"$T/flex.pkg" 2>&1 && ok || { bad "flex: package check"; cat "$T/flex.pkg"; }
[ "$(op_counts "$FX")" = "10 0" ] && [ "$(op_counts "$T/flex.mlpackage")" = "14 2" ] && ok ||
	bad "flex: ops / transposes $(op_counts "$FX") -> $(op_counts "$T/flex.mlpackage") (10 0 -> 14 2)"
"$ANELINT" info -f mil "$T/flex.mlpackage" >"$T/flex.mil"
grep -q 'tensor<int32, \[4\]> xs_shape_bs1c = const().*val = tensor<int32, \[4\]>(\[1, -1, 1, 16\])' "$T/flex.mil" &&
	grep -q 'tensor<int32, \[3\]> ys_shape_bsc = const().*val = tensor<int32, \[3\]>(\[1, -1, 16\])' "$T/flex.mil" &&
	grep -q 'tensor<fp16, \[1, 32, 1, ?\]> h1s_bc1s = conv(' "$T/flex.mil" &&
	grep -q 'tensor<fp16, \[1, ?, 16\]> ys = reshape(' "$T/flex.mil" && ! grep -q ', 8\]> [a-z0-9]*s_bc1s' "$T/flex.mil" && ok ||
	{ bad "flex: the run depends on a concrete S"; cat "$T/flex.mil"; }
"$ANELINT" fix "$FX" --dry-run --allow reassociate --format json >"$T/flexd.json"
[ $? -eq 0 ] && grep -q '"layer": "h1s".*"applied": true, "after": "a run of 5 ops' "$T/flexd.json" &&
	grep -q '"layer": "h1b".*the output.s batch axis is symbolic' "$T/flexd.json" &&
	grep -q '"shapes": "default xs=1,8,16 xb=2,8,16; xs=1,4,16 xb=1,8,16; xb=4,8,16: 3 shapes proved' "$T/flexd.json" &&
	grep -q '"written": false' "$T/flexd.json" && ok || { bad "flex: dry run"; cat "$T/flexd.json"; }
EE=tests/data/modern/encoder_fp16_ios17_enumerated.mlpackage
RE=tests/data/reference/modern/encoder_fp16_ios17_enumerated
"$ANELINT" fix "$EE" -o "$T/ence.mlpackage" --allow reassociate --format json >"$T/ence.json" 2>"$T/ence.err"
[ $? -eq 0 ] && grep -q '"after": "a run of 46 ops (12 -> 1x1 conv, 22 of attention, 8 transposes dropped) in the (B, C, 1, S) layout: 1 entry, 1 exit"' "$T/ence.json" &&
	grep -q '"proved": true, "pass": true' "$T/ence.json" && rel_within "$T/ence.json" 1e-6 &&
	grep -q '"shapes": "default x=1,64,64; x=1,16,64; x=1,32,64: 3 shapes proved' "$T/ence.json" && ok ||
	{ bad "enumerated encoder"; cat "$T/ence.json" "$T/ence.err"; }
loads "$T/ence.mlpackage" && same_desc "$EE" "$T/ence.mlpackage" && ok || bad "enumerated encoder: load / description"
[ "$(op_counts "$EE")" = "46 8" ] && [ "$(op_counts "$T/ence.mlpackage")" = "42 2" ] && ok ||
	bad "enumerated encoder: ops / transposes $(op_counts "$EE") -> $(op_counts "$T/ence.mlpackage") (46 8 -> 42 2)"
for s in seq_16 seq_32; do
	"$ANELINT" run "$T/ence.mlpackage" --inputs "$RE/$s" --expect "$RE/$s" >"$T/ence_$s.txt" 2>&1 && ok ||
		{ bad "enumerated encoder: PyTorch's outputs at $s"; cat "$T/ence_$s.txt"; }
done
"$ANELINT" fix "$EE" --dry-run --allow reassociate --format json >"$T/enced.json"
[ $? -eq 0 ] && grep -q '"after": "a run of 46 ops (12 -> 1x1 conv, 22 of attention, 8 transposes dropped)' "$T/enced.json" &&
	grep -q '"shapes": "default x=1,64,64; x=1,16,64; x=1,32,64: 3 shapes proved' "$T/enced.json" &&
	grep -q '"written": false' "$T/enced.json" && ok || { bad "enumerated encoder: dry run"; cat "$T/enced.json"; }
ER=tests/data/modern/encoder_fp16_ios17_rangedim.mlpackage
RR=tests/data/reference/modern/encoder_fp16_ios17_rangedim
"$ANELINT" fix "$ER" -o "$T/encr.mlpackage" --allow reassociate --format json >"$T/encr.json" 2>"$T/encr.err"
[ $? -eq 0 ] && grep -q '"after": "a run of 46 ops (12 -> 1x1 conv, 22 of attention, 8 transposes dropped)' "$T/encr.json" &&
	grep -q '"proved": true, "pass": true' "$T/encr.json" && rel_within "$T/encr.json" 1e-6 &&
	grep -q '"shapes": "default x=1,64,64; x=1,8,64; x=1,128,64: 3 shapes proved' "$T/encr.json" &&
	loads "$T/encr.mlpackage" && same_desc "$ER" "$T/encr.mlpackage" && ok || { bad "range encoder"; cat "$T/encr.json" "$T/encr.err"; }
for s in seq_37 seq_128; do
	"$ANELINT" run "$T/encr.mlpackage" --inputs "$RR/$s" --expect "$RR/$s" >"$T/encr_$s.txt" 2>&1 && ok ||
		{ bad "range encoder: PyTorch's outputs at $s"; cat "$T/encr_$s.txt"; }
done

# 5f3c. cross-attention (fix_mil_xattn): the queries from x [1,8,16], the keys and
#     values from m [1,6,16]: one run with two sequences, both inputs converted once,
#     the scores [1,2,6,8] (keys first, softmax on axis 2), the context [1,2,8,8];
#     17 -> 19 ops, 4 -> 3 transposes (one per entry and exit), within 1e-6
XA=$C/fix_mil_xattn.mlpackage
"$ANELINT" fix "$XA" -o "$T/xa.mlpackage" --allow reassociate --format json >"$T/xa.json" 2>"$T/xa.err"
[ $? -eq 0 ] && [ "$(applied "$T/xa.json")" -eq 1 ] &&
	grep -q '"layer": "lq".*"applied": true, "after": "a run of 17 ops (4 -> 1x1 conv, 11 of attention, 4 transposes dropped) in the (B, C, 1, S) layout: 2 entries, 1 exit"' "$T/xa.json" &&
	grep -q '"proved": true, "pass": true' "$T/xa.json" && rel_within "$T/xa.json" 1e-6 && ok ||
	{ bad "xattn"; cat "$T/xa.json" "$T/xa.err"; }
loads "$T/xa.mlpackage" && same_desc "$XA" "$T/xa.mlpackage" && ok || bad "xattn: load / description"
GONE="lq rq lk rk lv rv tq tk s a p tv c tc j lo wq wk wv wo hq hm flat p0213 pk last no" pkgcheck "$XA" "$T/xa.mlpackage" y >"$T/xa.pkg" 2>&1 &&
	grep -q 'blobs 8 -> 8' "$T/xa.pkg" && ok || { bad "xattn: package check"; cat "$T/xa.pkg"; }
[ "$(op_counts "$XA")" = "17 4" ] && [ "$(op_counts "$T/xa.mlpackage")" = "19 3" ] && ok ||
	bad "xattn: ops / transposes $(op_counts "$XA") -> $(op_counts "$T/xa.mlpackage") (17 4 -> 19 3)"
"$ANELINT" check --all --shapes --rules "$T/nofloor.rules" "$T/xa.mlpackage" >"$T/xa.chk" 2>&1
grep -qE ' s_bc1s +matmul +\[1,2,6,8\] .* ANE' "$T/xa.chk" && grep -qE ' p_bc1s +softmax +\[1,2,6,8\] .* ANE' "$T/xa.chk" &&
	grep -qE ' c_bc1s +matmul +\[1,2,8,8\] .* ANE' "$T/xa.chk" && grep -qE ' lk_bc1s +conv +\[1,16,1,6\] .* ANE' "$T/xa.chk" &&
	! grep -q 'declared' "$T/xa.chk" && grep -qE 'summary: 19 ops .*19 on the ANE' "$T/xa.chk" && ok ||
	{ bad "xattn: the rewritten ops"; cat "$T/xa.chk"; }
"$ANELINT" fix "$XA" --dry-run --allow reassociate --format json >"$T/xad.json"
[ $? -eq 0 ] && grep -q '"layer": "lq".*"applied": true, "after": "a run of 17 ops' "$T/xad.json" &&
	grep -q '"proved": true, "pass": true' "$T/xad.json" && grep -q '"written": false' "$T/xad.json" && ok ||
	{ bad "xattn: dry run"; cat "$T/xad.json"; }
fi

if part writer; then
# 5f4. plan points to the model-level fix: fix_mil_image's size range (ANE040) decides
#     its placement; plan names `anelint fix --shape img=default` and plans the model
#     without ANE040: with the work floor on, ANE071 still moves the tiny model to the
#     CPU; with it off, the plan of the fixed model, which must be what plan says of
#     the model fix --shape writes. A cheapest fix names the passes answering its rule.
IM=$C/fix_mil_image.mlpackage
"$ANELINT" plan "$IM" >"$T/imp.txt"
grep -q "^  model    ANE040 is removed by: anelint fix --shape img=default $IM -o OUT (pass input-fixed-shape, exact" "$T/imp.txt" &&
	grep -q '^           then ANE071 (tiny-model) still moves the whole model off the ANE (-> cpu): the whole model does' "$T/imp.txt" &&
	ok || { bad "plan: the model fix of $IM"; cat "$T/imp.txt"; }
"$ANELINT" plan --format json "$IM" | python3 -c '
import json, sys
m = json.load(sys.stdin)["models"][0]["model_fix"]
assert m["rule"] == "ANE040" and m["shape_default"] == ["img"] and m["then_rule"] == "ANE071", m' && ok ||
	bad "plan: the JSON model_fix of $IM"
"$ANELINT" check "$IM" | grep -A1 '^model: ANE040 ' | grep -q '^       fix: anelint fix --shape img=default (exact' && ok ||
	bad "check: the fix of ANE040"
# not under a pipeline's stage: fix rewrites a model's own inputs only
"$ANELINT" check tests/data/crafted/enum_pipeline.mlmodel | grep -q '^model: ANE041 ' &&
	! "$ANELINT" check tests/data/crafted/enum_pipeline.mlmodel | grep -q '^       fix: ' && ok ||
	bad "check: a fix command under a pipeline stage"
"$ANELINT" plan --rules "$T/nofloor.rules" "$IM" >"$T/imp0.txt"
"$ANELINT" fix "$IM" --shape img=default -o "$T/imf.mlpackage" >/dev/null 2>&1
"$ANELINT" plan --rules "$T/nofloor.rules" "$T/imf.mlpackage" >"$T/imf.txt"
then_ms=$(sed -n 's/^           then 1 segment, 0 switches, .*, est\. \([0-9.]*\) ms (now .*/\1/p' "$T/imp0.txt")
fixed_ms=$(sed -n 's/^  estimate \([0-9.]*\) ms = .*/\1/p' "$T/imf.txt")
[ -n "$then_ms" ] && [ "$then_ms" = "$fixed_ms" ] && ! grep -q '^  model ' "$T/imf.txt" && ok ||
	{ bad "plan: the would-be plan ($then_ms ms) is not the fixed model's ($fixed_ms ms)"; cat "$T/imp0.txt" "$T/imf.txt"; }
"$ANELINT" plan --rules "$T/nofloor.rules" "$D/cumsum__mlp_fp16.mlpackage" >"$T/cs.txt"
grep -q '^         anelint fix rewrites it: mil-cumsum-to-matmul (reassociate: --allow reassociate)$' "$T/cs.txt" && ok ||
	{ bad "plan: the fix pass of a cheapest fix"; cat "$T/cs.txt"; }
"$ANELINT" plan --max-fixes 10 --os ios17 --rules "$T/nofloor.rules" "$D/gather_index_select__mlp_fp16.mlpackage" >"$T/gi.txt"
grep -A1 ' layers ANE030 (mil-fp32-io-cast) moves: ' "$T/gi.txt" |
	grep -q '^         anelint fix rewrites it: mil-io-fp16 (approximate: --allow approximate)$' && ok ||
	{ bad "plan: the fp16 I/O pass of the ANE030 fix"; cat "$T/gi.txt"; }
# a pass that rewrites the op feeding the fallback (the per-block weight's constexpr)
"$ANELINT" plan --max-fixes 10 --rules "$T/nofloor.rules" tests/data/modern/mlp_int4_block32_ios18.mlpackage >"$T/bq.txt"
grep -A1 '(linear, ANE038 mil-per-block-quantized-weight)$' "$T/bq.txt" |
	grep -q '^         anelint fix rewrites it: mil-blockwise-to-per-channel (approximate: --allow approximate)$' && ok ||
	{ bad "plan: the per-block weight pass of the ANE038 fix"; cat "$T/bq.txt"; }

# 5g. a static-length fp16 lstm unrolled (ANE021, reassociate): 3 steps -> 14 ops a
#     step + expand_dims, every new op on the ANE by its own verdict, the lstm's
#     three outputs kept by name; the 20-step one left (more than 16 steps);
#     without --allow reassociate only reported; --dry-run and --proof region agree
fixcase lstm $C/fix_mil_lstm.mlpackage lstm 2 1 reassociate "y" --allow reassociate
grep -q '"layer": "z".*"why_not": "20 steps: at most 16 are unrolled' "$T/lstm.json" && ok || bad "lstm: z reason"
"$ANELINT" check --all --rules "$T/nofloor.rules" "$T/lstm.mlpackage" >"$T/lstm.chk"
n=$(grep -cE '^ +[0-9]+ +[A-Za-z0-9_]+ +(slice_by_index|linear|add|split|sigmoid|tanh|mul|expand_dims) +ANE' "$T/lstm.chk")
[ "$n" -eq 43 ] && grep -qE '^ +[0-9]+ +y +expand_dims +ANE' "$T/lstm.chk" && grep -qE '^ +[0-9]+ +h +mul +ANE' "$T/lstm.chk" &&
	grep -qE '^ +[0-9]+ +c +add +ANE' "$T/lstm.chk" && grep -qE '^ +[0-9]+ +z +lstm +-> cpu' "$T/lstm.chk" && ok ||
	{ bad "lstm: $n unrolled ops on the ANE (43 expected)"; cat "$T/lstm.chk"; }
"$ANELINT" fix $C/fix_mil_lstm.mlpackage --dry-run --proof region --allow reassociate --format json >"$T/lstmr.json"
[ $? -eq 0 ] && grep -q '"kind": "region"' "$T/lstmr.json" && grep -q '"proved": true, "pass": true' "$T/lstmr.json" &&
	grep -q '"after": "3 steps, linear x2' "$T/lstmr.json" && ok || { bad "lstm: region proof / dry run"; cat "$T/lstmr.json"; }
"$ANELINT" fix $C/fix_mil_lstm.mlpackage -o "$T/lstm0.mlpackage" --format json >"$T/lstm0.json"
[ $? -eq 0 ] && grep -q '"layer": "y".*"why_not": "rounds differently: needs --allow reassociate (it would be: 3 steps' "$T/lstm0.json" &&
	same_tree $C/fix_mil_lstm.mlpackage "$T/lstm0.mlpackage" && ok || { bad "lstm without --allow"; cat "$T/lstm0.json"; }
# converted (coremltools, iOS 17 fp16): 10 steps, the whole sequence (a stack), 1 -> 0
fixcase lstm_conv $D/lstm__mlp_ios17_fp16.mlpackage lstm_conv 1 0 reassociate "y_cast_fp16_0" --allow reassociate
# an lstm computing in fp32 (ANE029 would keep fp32 unrolled ops off): left with
# --allow reassociate, with its reason; a bidirectional fp16 one: unrolled (corpus;
# skipped without it; tests/pass_mil_lstm_unroll.sh has the rest)
if [ -d "$CORPUS/converted/lstm__mlp_fp32.mlpackage" ]; then
	"$ANELINT" fix "$CORPUS/converted/lstm__mlp_fp32.mlpackage" --dry-run --allow reassociate --format json >"$T/l32.json"
	grep -q '"why_not": "mil-lstm-unroll: the lstm computes in fp32: unrolled into fp32 ops they would still fall back (ANE029)' "$T/l32.json" && ok ||
		{ bad "lstm fp32: reason"; cat "$T/l32.json"; }
	"$ANELINT" fix "$CORPUS/converted/lstm_bidir_2layer__mlp_ios17_fp16.mlpackage" --dry-run --allow reassociate --format json >"$T/lbi.json"
	grep -q '"layer": "y_cast_fp16_0", "type": "lstm", "pass": "mil-lstm-unroll", "rule": "ANE021", "class": "reassociate", "applied": true, "after": "10 steps, two chains' "$T/lbi.json" && ok ||
		{ bad "lstm bidirectional: not unrolled"; cat "$T/lbi.json"; }
else
	skip=$((skip + 2))
fi
fi

if part mil-gru-unroll; then
# 5h. a static-length fp16 gru unrolled (ANE021, reassociate): the weights
#     regrouped once into [r | z] and o consts (8 new blobs: each matrix of
#     >= 10 values, as coremltools stores them; the biases immediate), the input projection one
#     linear over the sequence, 14 ops a step; forward (last step) and reverse
#     (the whole sequence, in processing order); the 20-step one left with its
#     reason; bit-identical to the interpreter's gru kernel
fixcase gru $C/fix_mil_gru.mlpackage gru 3 1 reassociate "y r" --allow reassociate
grep -q '"layer": "z".*"why_not": "20 steps: at most 16 are unrolled' "$T/gru.json" &&
	grep -q '"identical": true' "$T/gru.json" && ! grep -q '"identical": false' "$T/gru.json" && ok ||
	bad "gru: z reason / not bit-identical"
grep -q 'blobs 3 -> 11' "$T/gru.pkg" && ok || bad "gru: $(cat "$T/gru.pkg") (8 new blobs expected)"
"$ANELINT" check --all --rules "$T/nofloor.rules" "$T/gru.mlpackage" >"$T/gru.chk"
n=$(grep -cE '^ +[0-9]+ +[A-Za-z0-9_]+ +(slice_by_index|linear|add|split|sigmoid|tanh|mul|sub|expand_dims|stack) +ANE' "$T/gru.chk")
# 3 + 4 steps x 14 ops, 2 input linears each, expand_dims and stack
[ "$n" -eq 104 ] && grep -qE '^ +[0-9]+ +h +add +ANE' "$T/gru.chk" && grep -qE '^ +[0-9]+ +r +stack +ANE' "$T/gru.chk" &&
	grep -qE '^ +[0-9]+ +z +gru +-> cpu' "$T/gru.chk" && ok ||
	{ bad "gru: $n unrolled ops on the ANE (104 expected)"; cat "$T/gru.chk"; }
"$ANELINT" fix $C/fix_mil_gru.mlpackage --dry-run --proof region --allow reassociate --format json >"$T/grur.json"
[ $? -eq 0 ] && grep -q '"kind": "region"' "$T/grur.json" && grep -q '"proved": true, "pass": true' "$T/grur.json" &&
	grep -q '"layer": "r".*"after": "4 steps (reversed) of linear' "$T/grur.json" && ok ||
	{ bad "gru: region proof / dry run"; cat "$T/grur.json"; }
"$ANELINT" fix $C/fix_mil_gru.mlpackage -o "$T/gru0.mlpackage" --format json >"$T/gru0.json"
[ $? -eq 0 ] && grep -q '"layer": "y".*"why_not": "rounds differently: needs --allow reassociate (it would be: 3 steps' "$T/gru0.json" &&
	same_tree $C/fix_mil_gru.mlpackage "$T/gru0.mlpackage" && ok || { bad "gru without --allow"; cat "$T/gru0.json"; }
fi

if part mil-fp32-island; then
# 5c. fp32 islands -> fp16 (approximate, opt-in): cast up -> identity, relu and
#     add typed fp16, the cast back -> identity; the island reading an fp32
#     constant is left with its reason; without --allow approximate nothing changes
# (one rewrite changes four ops: fixcase's count of rewrites does not fit)
"$ANELINT" fix $C/fix_mil_island.mlpackage -o "$T/island.mlpackage" --format json --allow approximate \
	>"$T/island.json" 2>"$T/island.err"
rc=$?
[ $rc -eq 0 ] && [ "$(applied "$T/island.json")" -eq 1 ] && [ "$(fallbacks before "$T/island.json")" = 7 ] &&
	[ "$(fallbacks after "$T/island.json")" = 3 ] && grep -q '"proved": true, "pass": true' "$T/island.json" &&
	ok || { bad "island (rc $rc)"; cat "$T/island.json" "$T/island.err"; }
loads "$T/island.mlpackage" && ok || bad "island: the output does not load"
pkgcheck $C/fix_mil_island.mlpackage "$T/island.mlpackage" a32 r32 s32 y >"$T/island.pkg" 2>&1 && ok ||
	{ bad "island: package check"; cat "$T/island.pkg"; }
grep -q '"layer": "b32".*"why_not": "'"'"'m32'"'"' (mul) also reads '"'"'k32'"'"'' "$T/island.json" && ok ||
	bad "island: the constant island's reason"
"$ANELINT" check --all --rules "$T/nofloor.rules" "$T/island.mlpackage" >"$T/island.chk"
grep -qE '^ +[0-9]+ +a32 +identity +ANE' "$T/island.chk" && grep -qE '^ +[0-9]+ +r32 +relu +ANE' "$T/island.chk" &&
	grep -qE '^ +[0-9]+ +y +identity +ANE' "$T/island.chk" && grep -qE 'm32 +mul +-> gpu +\[[AMG]\] +ANE029' "$T/island.chk" &&
	ok || { bad "island: the rewritten ops"; cat "$T/island.chk"; }
"$ANELINT" fix $C/fix_mil_island.mlpackage -o "$T/island0.mlpackage" >"$T/island0.txt"
[ $? -eq 0 ] && same_tree $C/fix_mil_island.mlpackage "$T/island0.mlpackage" && ok ||
	{ bad "island without --allow approximate"; cat "$T/island0.txt"; }
fi

if part writer; then
# 5i. a weight quantized per block -> int8 per output channel (ANE038, approximate, opt-in):
#     the corpus's int4 per_block MLP (3 linears on the CPU by ANE038) -> 0; every
#     output within 1e-2 of the input model's (measured rel 3.4e-3); the weight data
#     int8 of the same shape, the scale [N, 1]; ANE038 gone from check; --dry-run
#     reports the same rewrites and writes nothing; without --allow approximate
#     nothing changes; the output is no candidate any more (per channel already).
#     Crafted: a conv weight (rank 4, scale [16,1,1,1]) applied; a matmul's weight,
#     an int32-scaled one and one the interpreter cannot decode refused with reasons.
Q=tests/data/modern/mlp_int4_block32_ios18.mlpackage
QW="fcs_0_weight_to_fp16_quantized fcs_1_weight_to_fp16_quantized fcs_2_weight_to_fp16_quantized"
fixcase blockq $Q blockq 3 0 approximate "$QW" --allow approximate
rel_within "$T/blockq.json" 1e-2 && ok || bad "blockq: an output differs by more than 1e-2"
grep -q '"identical": false' "$T/blockq.json" && ok || bad "blockq: bit-identical (nothing requantized?)"
n0=$("$ANELINT" check $Q | grep -c ' ANE038 weight ')
n1=$("$ANELINT" check "$T/blockq.mlpackage" | grep -c ' ANE038 weight ')
[ "$n0" -eq 3 ] && [ "$n1" -eq 0 ] && ok || bad "blockq: ANE038 $n0 -> $n1 (3 -> 0 expected)"
"$ANELINT" info -f mil "$T/blockq.mlpackage" >"$T/blockq.mil"
grep -q 'fcs_1_weight_to_fp16_quantized = constexpr_blockwise_shift_scale(data = tensor<int8, \[128, 128\]>(BLOBFILE.*scale = tensor<fp16, \[128, 1\]>(BLOBFILE' "$T/blockq.mil" &&
	ok || bad "blockq: fcs_1 is not int8 [128,128] with an fp16 scale [128,1]"
grep -q '"after": "int4 per-block (block 32) -> int8 per-channel, scale \[128, 1\] (new blobs; weight 4608 -> 8448 bytes)"' \
	"$T/blockq.json" && ok || bad "blockq: the report of fcs_0"
# 6 new blobs (int8 data and fp16 scale per layer), the 6 they replace dropped (compaction)
grep -q 'blobs 9 -> 9 (compacted)' "$T/blockq.pkg" && ok || bad "blockq: $(cat "$T/blockq.pkg") (9 -> 9 compacted expected)"
"$ANELINT" fix $Q -o "$T/blockq_dry.mlpackage" --format json --allow approximate --dry-run >"$T/blockq_dry.json"
python3 -c 'import json, sys
a, b = (json.load(open(f))["rewrites"] for f in sys.argv[1:])
sys.exit(0 if a == b and sum(r["applied"] for r in a) == 3 else 1)' "$T/blockq.json" "$T/blockq_dry.json" &&
	[ ! -e "$T/blockq_dry.mlpackage" ] && ok || bad "blockq: --dry-run does not report the same rewrites"
"$ANELINT" fix $Q -o "$T/blockq0.mlpackage" --format json >"$T/blockq0.json"
[ "$(grep -c '"why_not": "changes results: needs --allow approximate (it would be: int4 per-block' "$T/blockq0.json")" -eq 3 ] &&
	same_tree $Q "$T/blockq0.mlpackage" && ok || { bad "blockq without --allow approximate"; cat "$T/blockq0.json"; }
"$ANELINT" fix "$T/blockq.mlpackage" -o "$T/blockq2.mlpackage" --format json --allow approximate >"$T/blockq2.json"
! grep -q mil-blockwise-to-per-channel "$T/blockq2.json" && same_tree "$T/blockq.mlpackage" "$T/blockq2.mlpackage" &&
	ok || bad "blockq: the per-channel output is a candidate again"
fixcase blockq_conv $C/fix_mil_blockq.mlpackage blockq_conv 2 1 approximate "wc" --allow approximate
"$ANELINT" info -f mil "$T/blockq_conv.mlpackage" | grep -q 'wc = constexpr_blockwise_shift_scale(data = tensor<int8, \[16, 8, 1, 1\]>(BLOBFILE.*scale = tensor<fp16, \[16, 1, 1, 1\]>' &&
	ok || bad "blockq_conv: wc is not int8 per channel"
grep -q '"layer": "wm".*"why_not": "read by matmul '"'"'m'"'"' other than as a linear / conv weight' "$T/blockq_conv.json" &&
	ok || bad "blockq_conv: the matmul weight's reason"
grep -q '"layer": "wi".*"why_not": "its output is int32 (fp16 / fp32 only)"' "$T/blockq_conv.json" &&
	ok || bad "blockq_conv: the int32 weight's reason"
"$ANELINT" fix $C/fix_mil_blockq_bad.mlpackage -o "$T/blockq_bad.mlpackage" --format json --allow approximate >"$T/blockq_bad.json"
grep -q '"layer": "wb".*"why_not": "the interpreter cannot decode it: .*scale'"'"'s dims must divide data'"'"'s' "$T/blockq_bad.json" &&
	same_tree $C/fix_mil_blockq_bad.mlpackage "$T/blockq_bad.mlpackage" && ok ||
	{ bad "blockq_bad: the undecodable weight's reason"; cat "$T/blockq_bad.json"; }

# 5j. a whole fp32 ML Program -> fp16 compute (mil-fp16-compute, ANE029, approximate,
#     opt-in): the converted transformer encoder (compute_precision FLOAT32) goes from
#     25 ANE029 fallbacks to none by their own verdict, keeps its fp32 I/O (a cast after
#     the input, one before the output), loads, parses, and its proof stays within
#     5e-4 (the fp16 weights; the reference interpreter runs fp16 ops in fp32); the
#     crafted one keeps its clip (bounds beyond fp16) in fp32 between casts, its 1e-9
#     becomes 2^-24 and its cast to fp32 a cast to fp16; refused: a mixed program (the
#     island fixture), quiet on an fp16 one; without --allow approximate only reported.
#     --max-rounds 1: the pass alone (a second round rewrites its output, fix_rounds.sh)
TE=$D/transformer_encoder__mlp_fp32.mlpackage
"$ANELINT" fix $TE -o "$T/te16.mlpackage" --format json --allow approximate --max-rounds 1 >"$T/te16.json" 2>"$T/te16.err"
rc=$?
[ $rc -eq 0 ] && [ "$(applied "$T/te16.json")" -eq 1 ] && grep -q '"pass": "mil-fp16-compute", "rule": "ANE029", "class": "approximate", "applied": true, "after": "25 ops in fp16; 14 fp32 consts -> fp16 (12 new blobs); casts at 2 fp32 inputs / outputs"' "$T/te16.json" &&
	[ "$(fallbacks before "$T/te16.json")" = 25 ] && [ "$(fallbacks after "$T/te16.json")" = 0 ] &&
	grep -q '"proved": true, "pass": true' "$T/te16.json" && grep -q '"written": true' "$T/te16.json" && ok ||
	{ bad "fp16 compute: transformer (rc $rc)"; cat "$T/te16.json" "$T/te16.err"; }
rel_within "$T/te16.json" 5e-4 && ! grep -q '"identical": true' "$T/te16.json" && ok || bad "fp16 compute: the proof's relative difference"
loads "$T/te16.mlpackage" && ok || bad "fp16 compute: the output does not load"
"$ANELINT" check --rules "$T/nofloor.rules" $TE | grep -q '^rules fired: ANE029 x25 ' &&
	"$ANELINT" check --rules "$T/nofloor.rules" "$T/te16.mlpackage" >"$T/te16.chk" &&
	! grep -q ANE029 "$T/te16.chk" && grep -q '^summary: 27 ops (+36 const), 27 on the ANE (100.0%)' "$T/te16.chk" && ok ||
	{ bad "fp16 compute: ANE029 25 -> 0"; cat "$T/te16.chk"; }
"$ANELINT" info --format mil "$T/te16.mlpackage" >"$T/te16.mil"
grep -q 'func main<ios15>(tensor<fp32, \[1, 16, 64\]> x)' "$T/te16.mil" &&
	grep -q 'tensor<fp16, \[1, 16, 64\]> x_to_fp16 = cast(x = x, ' "$T/te16.mil" &&
	grep -q 'tensor<fp32, \[1, 16, 64\]> var_101 = cast(x = var_101_cast_fp16, ' "$T/te16.mil" &&
	grep -q '} -> (var_101);' "$T/te16.mil" && [ "$(grep -c 'tensor<fp32' "$T/te16.mil")" -eq 2 ] &&
	"$ANELINT" info "$T/te16.mlpackage" | grep -q '^    var_101: multiArray fp32 \[1, 16, 64\]$' && ok ||
	{ bad "fp16 compute: the I/O types"; cat "$T/te16.mil"; }
"$ANELINT" fix $TE --dry-run --format json --allow approximate --max-rounds 1 >"$T/te16d.json"
[ $? -eq 0 ] && grep -q '"applied": true, "after": "25 ops in fp16; 14 fp32 consts -> fp16 (12 new blobs)' "$T/te16d.json" &&
	grep -q '"written": false' "$T/te16d.json" && [ "$(fallbacks after "$T/te16d.json")" = 0 ] && ok ||
	{ bad "fp16 compute: dry run"; cat "$T/te16d.json"; }
"$ANELINT" fix $TE -o "$T/te0.mlpackage" >"$T/te0.txt"
[ $? -eq 0 ] && grep -q 'left     main                     (ML Program): changes results: needs --allow approximate (it would be: 25 ops in fp16; 14 fp32 consts -> fp16; casts' "$T/te0.txt" &&
	same_tree $TE "$T/te0.mlpackage" && ok || { bad "fp16 compute without --allow approximate"; cat "$T/te0.txt"; }
"$ANELINT" fix $C/fix_mil_fp32.mlpackage -o "$T/f32.mlpackage" --format json --allow approximate >"$T/f32.json" 2>"$T/f32.err"
[ $? -eq 0 ] && grep -q '"after": "6 ops in fp16, 1 kept fp32 between casts (e.g. '"'"'c'"'"'); 2 fp32 consts -> fp16 (1 new blobs); casts at 1 fp32 inputs / outputs"' "$T/f32.json" &&
	[ "$(fallbacks before "$T/f32.json")" = 7 ] && [ "$(fallbacks after "$T/f32.json")" = 3 ] && rel_within "$T/f32.json" 1e-3 && ok ||
	{ bad "fp16 compute: crafted"; cat "$T/f32.json" "$T/f32.err"; }
loads "$T/f32.mlpackage" && ok || bad "fp16 compute: the crafted output does not load"
pkgcheck $C/fix_mil_fp32.mlpackage "$T/f32.mlpackage" k a r t w wf y >"$T/f32.pkg" 2>&1 && grep -q 'blobs 0 -> 1' "$T/f32.pkg" && ok ||
	{ bad "fp16 compute: package check"; cat "$T/f32.pkg"; }
"$ANELINT" info --format mil "$T/f32.mlpackage" >"$T/f32.mil"
grep -q 'tensor<fp32, \[1, 4, 2, 2\]> c = clip(x = x, alpha = lo, beta = hi)' "$T/f32.mil" &&
	grep -q 'c_to_fp16 = cast(x = c, ' "$T/f32.mil" && grep -q '\[\[0x1p-24\]\]' "$T/f32.mil" &&
	grep -q 'tensor<fp16, \[1, 4, 2, 2\]> wf = cast(x = wi, dtype = fp16_compute_dtype_fp16)' "$T/f32.mil" &&
	grep -q '} -> (y, c);' "$T/f32.mil" && ok || { bad "fp16 compute: crafted ops"; cat "$T/f32.mil"; }
"$ANELINT" fix $C/fix_mil_island.mlpackage --dry-run --format json --allow approximate >"$T/isl16.json"
grep -q '"layer": "main", "type": "(ML Program)", "pass": "mil-fp16-compute", "rule": "ANE029", "class": "approximate", "applied": false, "why_not": "2 ops produce fp16 values already' "$T/isl16.json" &&
	[ "$(applied "$T/isl16.json")" -eq 1 ] && ok || { bad "fp16 compute: mixed program refused"; cat "$T/isl16.json"; }
"$ANELINT" fix $D/cumsum__mlp_fp16.mlpackage --dry-run --allow approximate >"$T/c16.txt"
"$ANELINT" fix $D/cumsum__mlp_fp16.mlpackage --dry-run --allow approximate --format json >"$T/c16.json"
! grep -q 'mil-fp16-compute' "$T/c16.txt" && grep -q '"why_not": "no op computes in fp32"' "$T/c16.json" && ok ||
	{ bad "fp16 compute: an fp16 program"; cat "$T/c16.txt"; }

# 6. nothing to rewrite -> byte-identical copies: reassociate not allowed, fp32
#    matmuls that would still fall back, and the dynamic converted models
"$ANELINT" fix $D/cumsum__mlp_fp16.mlpackage -o "$T/noallow.mlpackage" >"$T/noallow.txt"
rc=$?
[ $rc -eq 0 ] && grep -q 'needs --allow reassociate' "$T/noallow.txt" && same_tree $D/cumsum__mlp_fp16.mlpackage "$T/noallow.mlpackage" &&
	ok || { bad "cumsum without --allow (rc $rc)"; cat "$T/noallow.txt"; }
"$ANELINT" fix $D/cumsum__mlp_fp32.mlpackage -o "$T/fp32.mlpackage" --allow reassociate >"$T/fp32.txt"
rc=$?
[ $rc -eq 0 ] && grep -q "left .*var_4 .*would still fall back: ANE029" "$T/fp32.txt" &&
	same_tree $D/cumsum__mlp_fp32.mlpackage "$T/fp32.mlpackage" && ok || { bad "cumsum fp32 (rc $rc)"; cat "$T/fp32.txt"; }
"$ANELINT" fix $D/full_fill_dynamic__mlp_ios17_fp16.mlpackage -o "$T/ffd.mlpackage" >"$T/ffd.txt"
rc=$?
[ $rc -eq 0 ] && grep -q "left .*f_cast_fp16 .*fill: 'shape' is concat_0, computed at run time" "$T/ffd.txt" &&
	grep -q "left .*fill_like_0_cast_fp16 .*'ref_tensor' has shape \[1,16\*\], not static" "$T/ffd.txt" &&
	same_tree $D/full_fill_dynamic__mlp_ios17_fp16.mlpackage "$T/ffd.mlpackage" && ok || { bad "full_fill_dynamic (rc $rc)"; cat "$T/ffd.txt"; }
"$ANELINT" fix $D/arange_dynamic__mlp_fp16.mlpackage -o "$T/ar.mlpackage" >"$T/ar.txt"
rc=$?
[ $rc -eq 0 ] && grep -q "left .*var_10 .*range_1d: 'end' is gather_0, computed at run time" "$T/ar.txt" &&
	same_tree $D/arange_dynamic__mlp_fp16.mlpackage "$T/ar.mlpackage" && ok || { bad "arange_dynamic (rc $rc)"; cat "$T/ar.txt"; }

# 7. destinations: -o = input is a usage error; --dry-run writes nothing; -o
#    inside the input is refused; an existing package is replaced; an existing
#    directory that is no package is left alone; --in-place replaces the input
cp -R $C/fix_mil_fill.mlpackage "$T/mine.mlpackage"
"$ANELINT" fix "$T/mine.mlpackage" -o "$T/mine.mlpackage" >/dev/null 2>&1
[ $? -eq 2 ] && same_tree $C/fix_mil_fill.mlpackage "$T/mine.mlpackage" && ok || bad "-o = input not refused"
"$ANELINT" fix "$T/mine.mlpackage" -o "$T/dry.mlpackage" --dry-run >/dev/null 2>&1
[ $? -eq 0 ] && [ ! -e "$T/dry.mlpackage" ] && ok || bad "--dry-run wrote something"
"$ANELINT" fix "$T/mine.mlpackage" -o "$T/mine.mlpackage/Data/x.mlpackage" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e "$T/mine.mlpackage/Data/x.mlpackage" ] && same_tree $C/fix_mil_fill.mlpackage "$T/mine.mlpackage" &&
	[ -z "$(ls "$T/mine.mlpackage/Data" | grep tmp)" ] && ok || bad "-o inside the input (rc $rc)"
cp -R $C/fix_mil_range.mlpackage "$T/old.mlpackage"
touch "$T/old.mlpackage/marker"
"$ANELINT" fix "$T/mine.mlpackage" -o "$T/old.mlpackage" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && [ ! -e "$T/old.mlpackage/marker" ] && pkgcheck "$T/mine.mlpackage" "$T/old.mlpackage" f >/dev/null &&
	[ -z "$(ls "$T" | grep '\.tmp\|\.old')" ] && ok || bad "replacing an existing package (rc $rc)"
mkdir "$T/notpkg.mlpackage" && touch "$T/notpkg.mlpackage/keep"
"$ANELINT" fix "$T/mine.mlpackage" -o "$T/notpkg.mlpackage" >"$T/np.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && [ -e "$T/notpkg.mlpackage/keep" ] && [ ! -e "$T/notpkg.mlpackage/Manifest.json" ] &&
	grep -q 'not a model package' "$T/np.txt" && [ -z "$(ls "$T" | grep '\.tmp')" ] && ok ||
	{ bad "existing non-package -o (rc $rc)"; cat "$T/np.txt"; }
"$ANELINT" fix "$T/mine.mlpackage" --in-place >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && pkgcheck $C/fix_mil_fill.mlpackage "$T/mine.mlpackage" f >/dev/null && loads "$T/mine.mlpackage" &&
	[ -z "$(ls "$T" | grep '\.tmp\|\.old')" ] && ok || bad "--in-place (rc $rc)"

"$ANELINT" fix "$T/mine.mlpackage" -o "$T/named.mlmodel" >/dev/null 2>&1
[ $? -eq 2 ] && [ ! -e "$T/named.mlmodel" ] && ok || bad "a package written under a .mlmodel name"
cp -R $C/fix_mil_fill_like.mlpackage "$T/here.mlpackage"
case $ANELINT in */*) A=$(cd "$(dirname "$ANELINT")" && pwd)/$(basename "$ANELINT") ;; *) A=$ANELINT ;; esac
(cd "$T/here.mlpackage" && "$A" fix . --in-place >/dev/null 2>&1)
rc=$?
[ $rc -eq 0 ] && pkgcheck $C/fix_mil_fill_like.mlpackage "$T/here.mlpackage" f g >/dev/null &&
	[ -z "$(ls "$T" | grep '\.tmp\|\.old')" ] && ok || bad "--in-place on '.' (rc $rc)"

# 8. a write that fails half way (a symbolic link leaving the package) leaves
#    neither the output nor a temporary directory
cp -R $C/fix_mil_range.mlpackage "$T/evil.mlpackage"
echo secret >"$T/outside.txt"
ln -s "$T/outside.txt" "$T/evil.mlpackage/Data/leak.txt"
mkdir "$T/dst"
"$ANELINT" fix "$T/evil.mlpackage" -o "$T/dst/out.mlpackage" >"$T/evil.txt" 2>&1
rc=$?
[ $rc -ne 0 ] && [ -z "$(ls -A "$T/dst")" ] && grep -q 'outside the package' "$T/evil.txt" && ok ||
	{ bad "failed write left something (rc $rc)"; ls -la "$T/dst"; cat "$T/evil.txt"; }

# 8b. fix predicts for --target / --os / --compute-units as check does (its before/after
#     summaries and the rewrites it keeps): fill_like's fallbacks take the GPU with compute
#     units all on the newest release (2 segments), not with cpu-only nor on iOS 13 (1)
segs() { sed -n 's/.*"before": {[^}]*"segments": \([0-9]*\).*/\1/p' "$1"; }
for a in "x:2" "--compute-units cpu-only:1" "--os ios13:1" "--os macos15 --target m4 --compute-units cpu-and-ne:1"; do
	opts=${a%:*} want=${a##*:}
	[ "$opts" = x ] && opts=
	# shellcheck disable=SC2086
	"$ANELINT" fix --dry-run --format json $opts $C/fix_mil_fill_like.mlpackage >"$T/fo.json" 2>"$T/fo.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(segs "$T/fo.json")" = "$want" ] && ok || { bad "fix $opts: rc $rc, segments $(segs "$T/fo.json"), want $want"; cat "$T/fo.err"; }
done
for a in "--os ios12" "--target all" "--compute-units gpu"; do
	# shellcheck disable=SC2086
	"$ANELINT" fix --dry-run $a $C/fix_mil_fill_like.mlpackage >/dev/null 2>"$T/fo.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "takes" "$T/fo.err" && ok || bad "fix $a: rc $rc, want 2"
done
fi

# 9. the inputs never changed
inputs_sum >"$T/inputs.after"
cmp -s "$T/inputs.before" "$T/inputs.after" && ok || bad "an input file changed"

if part writer; then
# 10. corpus (skips without ../shared): the real GRU's fill zeros (shape from the
#     input's shape) are refused and copied; the iOS17 fp16-I/O cumsum goes 2 -> 0
# An ML Program model.mlmodel taken out of its package: the passes that would add
# constants say why not, and the output is a byte-identical copy.
lone=$C/fix_mil_range.mlpackage/Data/com.apple.CoreML/model.mlmodel
"$ANELINT" fix "$lone" -o "$T/lone.mlmodel" >"$T/lone.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "left .*outside its .mlpackage: new constants need its weight.bin" "$T/lone.txt" &&
	cmp -s "$lone" "$T/lone.mlmodel" && ok || { bad "lone model.mlmodel (rc $rc)"; cat "$T/lone.txt"; }

# 5k. a transformer encoder of a size the ANE takes (bench/mkmodels.py: 2 layers, sequence
#     128, width 256, fp32, 439 MFLOP: above the ANE071 floor the corpus' encoders are
#     under): one fix --allow approximate, two rounds: fp16 compute, then the (B, C, 1, S)
#     layout on its output: 46 ops all on the GPU -> 44, all on the ANE, one segment
if python3 bench/mkmodels.py "$T/enc" >/dev/null 2>&1; then
	E=$T/enc/encoder_s128_w256.mlpackage
	"$ANELINT" fix --allow approximate "$E" -o "$T/encl.mlpackage" >"$T/enc16.txt" 2>&1
	rc=$?
	"$ANELINT" check "$E" >"$T/enc0.chk"
	"$ANELINT" check "$T/encl.mlpackage" >"$T/encl.chk"
	"$ANELINT" plan "$T/encl.mlpackage" >"$T/encl.plan"
	[ $rc -eq 0 ] && grep -q '^summary: 46 ops (+56 const), 0 on the ANE (0.0%), 46 fall back: gpu 46$' "$T/enc0.chk" &&
		grep -q '^summary: 44 ops (+62 const), 44 on the ANE (100.0%)$' "$T/encl.chk" &&
		grep -q '^  on ANE   100.0% of the FLOPs' "$T/encl.plan" && [ "$(grep -c '^        [0-9]  ' "$T/encl.plan")" -eq 1 ] &&
		grep -q '^round 1: 1 rewrite applied$' "$T/enc16.txt" && grep -q 'changed  main .*\[mil-fp16-compute' "$T/enc16.txt" &&
		sed -n '/^round 2: /,$p' "$T/enc16.txt" | grep -q 'changed .*\[mil-block-bc1s-conv' &&
		grep -q '^rounds: 2, then nothing more applies (the fixed point)$' "$T/enc16.txt" &&
		! grep -q '^then: ' "$T/enc16.txt" && ok ||
		{ bad "a 439 MFLOP fp32 encoder onto the ANE (rc $rc)"; cat "$T/enc16.txt" "$T/enc0.chk" "$T/encl.chk" "$T/encl.plan"; }
else
	bad "bench/mkmodels.py did not write the encoder"
fi

if [ -d "$CORPUS/real" ] && [ -d "$CORPUS/converted" ]; then
	g=$CORPUS/real/ActivityClassifier_GRU_mlprogram.mlpackage
	"$ANELINT" fix "$g" -o "$T/gru.mlpackage" >"$T/gru.txt" 2>&1
	rc=$?
	# its fills stay; its two TensorArray loops are mil-while-unroll's (tests/pass_mil_while_unroll_lists.sh)
	[ $rc -eq 0 ] && grep -q "fill: 'shape' is sequential_gru_zeros_packed, computed at run time" "$T/gru.txt" &&
		[ "$(grep -c '^  changed  sequential_gru.*_while_0 while_loop -> 87 steps' "$T/gru.txt")" = 2 ] &&
		ok || { bad "corpus GRU (rc $rc)"; cat "$T/gru.txt"; }
	fixcase c17 "$CORPUS/converted/cumsum__mlp_ios17_fp16.mlpackage" c17 2 0 reassociate \
		"var_4_cast_fp16 var_7_cast_fp16" --allow reassociate
	# mil-fp16-compute on the corpus' fp32 CNNs: every ANE029 fallback gone (squeezenet
	# keeps its classify on the CPU, and the cast back to fp32 before it: classify takes
	# fp32 probabilities only, as in coremltools' own fp16 conversion); the fp32 GRU (a
	# while_loop) refused with its reason
	for a in mobilenet_v2:101:0 resnet18_w4:50:0 unet_small:29:0 squeezenet1_1:67:2; do
		m=${a%%:*} r=${a#*:}
		"$ANELINT" fix "$CORPUS/converted/${m}__mlp_fp32.mlpackage" --dry-run --allow approximate --format json >"$T/c16_$m.json"
		[ $? -eq 0 ] && [ "$(fallbacks before "$T/c16_$m.json")" = "${r%:*}" ] && [ "$(fallbacks after "$T/c16_$m.json")" = "${r#*:}" ] &&
			grep -q '"pass": "mil-fp16-compute", "rule": "ANE029", "class": "approximate", "applied": true' "$T/c16_$m.json" &&
			rel_within "$T/c16_$m.json" 1e-3 && ok || { bad "fp16 compute: corpus $m (want $r)"; cat "$T/c16_$m.json"; }
	done
	"$ANELINT" fix "$CORPUS/converted/gru__mlp_fp32.mlpackage" --dry-run --allow approximate --format json >"$T/c16_gru.json"
	grep -q '"why_not": "'"'"'while_loop_0_0'"'"' (while_loop) has nested blocks: their ops read outer values by name' "$T/c16_gru.json" && ok ||
		{ bad "fp16 compute: corpus gru reason"; cat "$T/c16_gru.json"; }
else
	skip=$((skip + 10))
	echo "skip: $CORPUS absent"
fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
