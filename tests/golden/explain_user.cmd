explain --rules tests/data/rules/cli.rules USR100 ane046
