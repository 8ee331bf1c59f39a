plan tests/data/converted/gru__nn_ios14.mlmodel tests/data/no-such-model.mlmodel
