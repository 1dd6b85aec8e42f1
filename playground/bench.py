"""`python -m playground.bench`: an entry point kept where the README and scripts call it; the code is
in playground.tools.bench. The library never imports this module."""

from playground.hw import openmp

openmp.bind_before_torch()  # before playground.tools.bench imports torch: as app.py and the CLI do (hw/openmp.py)

from playground.tools.bench import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
