check --format sarif tests/data/crafted/hostile_names.mlmodel tests/data/crafted/nn_rules.mlmodel tests/data/crafted/missing.mlmodel
