"""Reading a plain list costs time linear in its lines, whatever they hold: a line of 64 KB and
one of 1 MiB built to make a backtracking pattern try every split (``a``, spaces, ``b``; runs
of ``<``; an address followed by spaces and a second word) are read in time that grows with
their length, not its square, by the shape detection, the line reader and a whole dry run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from newsletter_connector.service.importing import ImportOptions, Provenance
from newsletter_connector.service.importing._files import (
    ImportSource,
    inspect,
    is_listed_line,
    listed_address,
)

pytestmark = pytest.mark.system  # asserts on timings

SMALL, LARGE = 64 * 1024, 1024 * 1024
#: Lines that make a backtracking pattern's time grow with the square of their length.
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "a, spaces, b": lambda n: "a" + " " * (n - 2) + "b",
    "spaces then an at sign": lambda n: " " * (n - 3) + "a@b",
    "an address then spaces and a word": lambda n: "a@b" + " " * (n - 4) + "c",
    "angle brackets": lambda n: "<" * n,
    "a name with no closing bracket": lambda n: "x" * (n - 4) + " <a@",
    "encoded words": lambda n: "=?" * (n // 2 - 3) + " <a@b>",
}


def _seconds(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def _grows_linearly(read: Callable[[str], object], make: Callable[[int], str]) -> None:
    small, large = make(SMALL), make(LARGE)
    _seconds(lambda: read(small))  # warm up
    small_time = min(_seconds(lambda: read(small)) for _ in range(3))
    large_time = _seconds(lambda: read(large))
    # 16 times the input: linear takes about 16 times as long, quadratic 256 times.
    assert large_time < 48 * max(small_time, 0.002), (small_time, large_time)
    assert large_time < 10


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_a_plain_lists_line_is_read_in_linear_time(shape: str) -> None:
    _grows_linearly(lambda line: (listed_address(line), is_listed_line(line)), ADVERSARIAL[shape])


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_the_shape_of_a_file_is_found_in_linear_time(shape: str) -> None:
    def read(line: str) -> object:
        data = (line + "\nann@example.org\n").encode()
        return inspect(ImportSource.from_bytes(data), max_bytes=len(data))

    _grows_linearly(read, ADVERSARIAL[shape])


def test_a_dry_run_of_a_plain_list_with_a_long_line_takes_linear_time(
    newsletter_service: Any,
) -> None:
    options = ImportOptions(provenance=Provenance("old list", "2024-01-02T03:04:05Z"))

    def dry_run(line: str) -> object:
        data = ("ann@example.org\n" + line + "\nbob@example.org\n").encode()
        importer = newsletter_service.subscriber_import
        return importer.dry_run(importer.plan(ImportSource.from_bytes(data), options))

    _grows_linearly(dry_run, ADVERSARIAL["a, spaces, b"])
