report --format dot tests/data/crafted/hostile_names.mlmodel
