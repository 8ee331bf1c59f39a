check --os all tests/data/crafted/mil_releases.mlpackage
