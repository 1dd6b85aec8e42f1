"""`python -m playground <command>`: the playground without a browser (see playground.cli)."""

from playground.cli import main

raise SystemExit(main())
