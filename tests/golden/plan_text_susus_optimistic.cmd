plan --policy optimistic tests/data/crafted/plan_susus.mlmodel
