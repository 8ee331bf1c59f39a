rules --rules tests/data/rules/cli.rules
