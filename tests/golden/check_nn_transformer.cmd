check --format json tests/data/converted/transformer_encoder__nn_ios13.mlmodel
