check --target all --format json tests/data/converted/upsample_x4_nearest__nn_ios13.mlmodel
