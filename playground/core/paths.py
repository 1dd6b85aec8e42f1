"""Where the playground's own files are: the repository, the package, the bundled model."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
REPO = PACKAGE.parent
ASSETS = PACKAGE / "assets"
BUNDLED_NAME = "shakespeare-gpt2"
BUNDLED_DIR = ASSETS / BUNDLED_NAME
