report --format html tests/data/crafted/nonneural_pipeline.mlmodel tests/data/crafted/missing.mlmodel
