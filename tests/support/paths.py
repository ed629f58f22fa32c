"""Where the tests find the repository: one root for every test module, wherever its folder."""

from __future__ import annotations

from pathlib import Path

#: The repository's root: ``src/``, ``tests/``, ``docs/``, ``examples/`` and ``pyproject.toml``
#: are below it.
ROOT = Path(__file__).resolve().parents[2]
