check --format json tests/data/converted/gru__mlp_fp16.mlpackage
