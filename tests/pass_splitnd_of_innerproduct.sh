#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/pass_splitnd_of_innerproduct.sh: splitnd-of-innerproduct
# (src/rewrite/passes/nn_splitnd_of_innerproduct.c, docs/surgery.md)
# on its crafted fixture (fix_qkv): a fused q/k/v innerProduct + splitND -> one
# innerProduct per part (reassociate); the innerProduct the add also reads
# stays; a region proof holds the innerProducts.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
. tests/lib/fix_pass.sh
FIXARGS="--allow reassociate"
# fused q/k/v innerProduct + splitND -> one innerProduct per part (reassociate: a
# matrix kernel's summation order follows its tiling); the innerProduct whose output
# the add also reads stays; a splitND of x on its last axis left
applies qkv 3 1 reassociate splitnd-of-innerproduct
has qkv 6 innerProduct
has qkv 1 splitND
left qkv split0 'splitnd-of-innerproduct: its input is not an innerProduct.s output; splitnd-to-split: axis 2 is not the channel axis'
grep -q '"layer": "split", .*"after": "3 innerProduct layers (weight rows split); the fused innerProduct deleted"' "$T/fx_qkv.json" &&
	grep -q '"layer": "split2", .*"after": "2 innerProduct layers (weight rows split)", "round": 1}' "$T/fx_qkv.json" && ok ||
	bad "fix_qkv: the fused innerProduct deleted / kept"
FIXARGS="--allow reassociate --proof region"
applies qkv 3 1 reassociate splitnd-of-innerproduct
grep -q '"input_layers": \["split", "qkv", "split2", "kv"\]' "$T/fx_qkv.json" && ok || bad "fix_qkv: the region does not hold the innerProducts"
FIXARGS=

summary
