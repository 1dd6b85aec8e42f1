"""`python -m playground.space`: an entry point kept where the README and scripts call it; the code is
in playground.tools.space. The library never imports this module."""

from playground.tools.space import main

if __name__ == "__main__":
    raise SystemExit(main())
