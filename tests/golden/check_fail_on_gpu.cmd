check --fail-on gpu --color never tests/data/converted/cumsum__mlp_fp16.mlpackage
