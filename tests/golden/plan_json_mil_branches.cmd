plan --format json tests/data/crafted/plan_mil_branches.mlpackage
