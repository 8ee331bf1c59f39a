check --format json tests/data/crafted/nonneural_pipeline.mlmodel
