check --target m2 --os macos15 --fail-on never tests/data/crafted/mil_releases.mlpackage
