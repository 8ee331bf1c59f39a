plan --os all --compute-units cpu-and-ne tests/data/crafted/mil_tiny.mlpackage
