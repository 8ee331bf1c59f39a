plan tests/data/converted/builder__custom_layer.mlmodel
