check --os all --target a15 --format json tests/data/crafted/mil_releases.mlpackage
