report --format html tests/data/converted/pool_k15_s3__nn_ios13.mlmodel
