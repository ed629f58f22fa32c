"""``newsletter-connector subscribers import FILE`` in every encoding an import reads (UTF-16
with a byte-order mark detected, Latin-1 detected, Windows-1252 named), and a clear refusal
naming any other encoding (a Python codec such as ``hex``, UTF-16 without a byte-order mark),
never a traceback; a refused file stores nothing."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_subscribers_import_cli import output_lines, run, stored, subscriber_count

__all__ = ["run"]  # the fixture, used by name

TEXT = "email,first_name\nANN.LEE@Example.ORG,Zoë\nbob@example.org,Renée\n"
CONSENT = ("--consent-source", "old list", "--consent-collected-at", "2024-01-02T03:04:05Z")


@pytest.mark.parametrize(
    ("data", "named", "said"),
    [
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), None, "UTF-16 with a byte-order mark"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "UTF-16", "UTF-16 with a byte-order"),
        (TEXT.encode("latin-1"), None, "Latin-1 (detected)"),
        ((TEXT + "cy@example.org,€uro\n").encode("cp1252"), "windows-1252", "Windows-1252"),
    ],
)
def test_a_file_in_each_encoding_is_imported(
    run: Any, newsletter_service: Any, tmp_path: Path, data: bytes, named: str | None, said: str
) -> None:
    path = tmp_path / "readers.csv"
    path.write_bytes(data)
    encoding = ("--encoding", named) if named else ()
    result = run("subscribers", "import", str(path), *CONSENT, *encoding)
    assert result.exit_code == 0, result.output
    assert said in output_lines(result)[0]
    assert stored(newsletter_service, "ann.lee@example.org").first_name == "Zoë"
    assert stored(newsletter_service, "bob@example.org").first_name == "Renée"
    if named == "windows-1252":
        assert stored(newsletter_service, "cy@example.org").first_name == "€uro"


@pytest.mark.parametrize(
    ("encoding", "data", "said"),
    [
        ("hex", TEXT.encode(), "'hex'"),
        ("rot13", TEXT.encode(), "'rot13'"),
        ("zlib_codec", TEXT.encode(), "'zlib_codec'"),
        ("utf-16", TEXT.encode("utf-16-le"), "byte-order mark"),
        ("utf-16", TEXT.encode(), "byte-order mark"),
        ("no-such-encoding", TEXT.encode(), "'no-such-encoding'"),
    ],
)
def test_an_encoding_the_import_does_not_read_is_refused_clearly(
    run: Any, newsletter_service: Any, tmp_path: Path, encoding: str, data: bytes, said: str
) -> None:
    path = tmp_path / "readers.csv"
    path.write_bytes(data)
    result = run("subscribers", "import", str(path), *CONSENT, "--encoding", encoding)
    assert result.exit_code != 0
    assert said in result.output and "Traceback" not in result.output
    assert subscriber_count(newsletter_service) == 0
