check --target all tests/data/converted/upsample_x4__mlp_fp16.mlpackage tests/data/converted/builder__legacy_rank5_elementwise.mlmodel
