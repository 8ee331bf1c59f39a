info --format json tests/data/crafted/enum_pipeline.mlmodel
