check --shapes --color never tests/data/converted/dilated_conv__nn_ios13.mlmodel tests/data/converted/arange_dynamic__mlp_fp16.mlpackage tests/data/converted/lstm__nn_ios14.mlmodel
