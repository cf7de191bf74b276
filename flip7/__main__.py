"""`python -m flip7` is the `flip7` command."""

from flip7.cli import main

raise SystemExit(main())
