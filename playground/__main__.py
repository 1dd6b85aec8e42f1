"""`python -m playground <command>`: the playground without a browser (see playground.tools.cli)."""

from playground.tools.cli import main

raise SystemExit(main())
