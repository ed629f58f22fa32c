"""The runnable example of docs/delivery.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[1] / "docs" / "delivery.md"


def block(name: str) -> str:
    text = DOC.read_text()
    match = re.search(rf"<!-- block: {re.escape(name)} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"no block {name}"
    return match.group(1)


def test_background_sync_example_runs(newsletter_service: Any) -> None:
    namespace: dict[str, Any] = {"service": newsletter_service}
    exec(block("delivery-background-sync"), namespace)
    assert not namespace["sync"].running
