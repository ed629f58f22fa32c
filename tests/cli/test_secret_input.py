"""A secret read from a piped stdin takes its one line and leaves the rest for the commands
after it: a script feeding two ``admin create-user`` from one pipe gives each its password."""

from __future__ import annotations

import os
import sys

import pytest

from newsletter_connector.cli.context import read_one_line


def test_one_line_is_read_and_the_next_stays_in_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    reading, writing = os.pipe()
    os.write(writing, b"first-password-1234\nsecond-password-5678\n")
    os.close(writing)
    with os.fdopen(reading, encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert read_one_line() == "first-password-1234"
        assert read_one_line() == "second-password-5678"
        assert read_one_line() == ""
