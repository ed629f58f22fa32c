"""The lines of a subscriber file, every one accounted for (docs/importing.md, "What each line
did"): a record with the line it starts on, a blank line, or lines the CSV rules cannot read,
with the first and last line they cover and why, in an editor's words. Reading goes on after
an unreadable record; a quote left open at the end of the file takes every line after it, and
those lines are named.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from ._files import FileShape, ImportSource

#: The longest field Python's CSV reader takes (its ``field_size_limit``).
MAX_FIELD = csv.field_size_limit()


@dataclass(frozen=True)
class Record:
    """A record of the file: its fields, and the line it starts on (1 is the first)."""

    line: int
    fields: list[str]


@dataclass(frozen=True)
class Blank:
    """A line holding nothing but spaces (or delimiters): skipped."""

    line: int


@dataclass(frozen=True)
class Unreadable:
    """Lines ``line`` to ``through`` that could not be read as a record, and why."""

    line: int
    through: int
    reason: str

    @property
    def lines(self) -> int:
        """How many lines of the file it covers."""
        return self.through - self.line + 1


#: What reading a file gives, line by line.
Line = Record | Blank | Unreadable


def read_lines(source: ImportSource, shape: FileShape) -> Iterator[Line]:
    """Every line of ``source`` in order: each record with the line it starts on, each blank
    line, and each span of lines the CSV rules cannot read (a stray quote, a field longer
    than :data:`MAX_FIELD` characters, a quote still open at the end of the file). A plain
    list (no delimiter) gives each line as one field."""
    with source.open() as raw:
        text = io.TextIOWrapper(raw, encoding=shape.encoding, newline="")
        if shape.delimiter is None:
            yield from _plain_lines(text)
            return
        reader = csv.reader(text, delimiter=shape.delimiter, strict=True)
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield _unreadable(start, reader.line_num, str(exc))
                continue
            if any(field.strip() for field in fields):
                yield Record(start, fields)
            else:
                yield from (Blank(line) for line in range(start, reader.line_num + 1))


def _unreadable(start: int, through: int, error: str) -> Unreadable:
    """Lines ``start`` to ``through``, refused in words for what the CSV reader said."""
    through = max(start, through)
    if "end of data" in error:
        span = f"lines {start} to {through}" if through > start else f"line {start}"
        reason = (
            f"a quote opened on line {start} never closes, so {span} (to the end of the "
            "file) could not be read; close the quote and import the file again"
        )
    elif "field limit" in error:
        reason = (
            f"a field holds more than {MAX_FIELD:,} characters, longer than any detail of "
            "a reader; check the line's quotes and delimiters"
        )
    else:
        reason = (
            "a quote inside a field that does not start with one; put the whole field in "
            'quotes and double each quote inside it ("")'
        )
    return Unreadable(start, through, reason)


def _plain_lines(text: io.TextIOWrapper) -> Iterator[Record | Blank]:
    for number, line in enumerate(text, start=1):
        if line.strip():
            yield Record(number, [line.rstrip("\r\n")])
        else:
            yield Blank(number)
