check --format json tests/data/converted/builder__custom_layer.mlmodel /no/such/model.mlmodel
