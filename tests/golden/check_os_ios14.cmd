check --os macos11 --fail-on never tests/data/converted/dilated_conv__nn_ios13.mlmodel tests/data/crafted/nn_rules.mlmodel
