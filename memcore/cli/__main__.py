"""`python -m memcore.cli ...`: the same as the `memcore` command."""

from memcore.cli.main import main

main()
