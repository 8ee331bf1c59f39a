report --format dot tests/data/crafted/plan_branches.mlmodel
