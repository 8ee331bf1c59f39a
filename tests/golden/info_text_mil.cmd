info tests/data/converted/upsample_x4__mlp_fp16.mlpackage
