plan --format json --policy optimistic --max-fixes 2 --switch-cost cpu>ane=300,gpu-cpu=900 tests/data/converted/cumsum__mlp_fp16.mlpackage
