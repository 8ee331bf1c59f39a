report --format markdown tests/data/crafted/plan_pingpong.mlmodel tests/data/converted/pool_k15_s3__nn_ios13.mlmodel
