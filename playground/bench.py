"""`python -m playground.bench`: an entry point kept where the README and scripts call it; the code is
in playground.tools.bench. The library never imports this module."""

from playground.tools.bench import main

if __name__ == "__main__":
    raise SystemExit(main())
