report --format dot tests/data/converted/cumsum__mlp_fp16.mlpackage
