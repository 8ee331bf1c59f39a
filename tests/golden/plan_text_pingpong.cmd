plan tests/data/crafted/plan_pingpong.mlmodel
