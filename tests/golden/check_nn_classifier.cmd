check --format json tests/data/crafted/nn_classifier.mlmodel
