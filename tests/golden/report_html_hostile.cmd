report tests/data/crafted/hostile_names.mlmodel
