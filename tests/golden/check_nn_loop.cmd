check --format json tests/data/converted/gru__nn_ios14.mlmodel
