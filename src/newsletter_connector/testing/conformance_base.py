"""The base of every per-repository conformance class: the ``storage`` fixture it needs."""

from __future__ import annotations

from typing import Any

import pytest


class NeedsStorage:
    """Subclass a conformance class and override ``storage`` with a fixture yielding the
    backend, empty and migrated (clean up after each test)."""

    @pytest.fixture
    def storage(self) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError("provide a `storage` fixture returning your backend")
