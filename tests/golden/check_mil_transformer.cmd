check --format json tests/data/converted/transformer_encoder__mlp_ios17_fp16.mlpackage
