plan --target all --switch-cost ane-gpu=1000,ane>cpu=500 tests/data/crafted/plan_branches.mlmodel
