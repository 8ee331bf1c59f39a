report --format html tests/data/crafted/plan_mil_branches.mlpackage
