check --target all --rules tests/data/rules/cli.rules tests/data/crafted/plan_pingpong.mlmodel
