check --format json tests/data/crafted/invalid_utf8_name.mlmodel
