info --format json tests/data/modern/mlp_int4_block32_ios18.mlpackage
