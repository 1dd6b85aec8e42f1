"""`python -m playground.train_bundled`: an entry point kept where the README and scripts call it; the code is
in playground.tools.train_bundled. The library never imports this module."""

from playground.tools.train_bundled import main

if __name__ == "__main__":
    raise SystemExit(main())
