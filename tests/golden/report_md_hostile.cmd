check --format markdown tests/data/crafted/hostile_names.mlmodel
