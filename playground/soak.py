"""`python -m playground.soak`: an entry point kept where the README and scripts call it; the code is
in playground.tools.soak. The library never imports this module."""

from playground.tools.soak import main

if __name__ == "__main__":
    raise SystemExit(main())
