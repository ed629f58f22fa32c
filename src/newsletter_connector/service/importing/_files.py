"""Reading a subscriber file as it comes (docs/importing.md, "Files as they come"): UTF-8 with
or without a byte-order mark, UTF-16 with one, Latin-1 detected, or Windows-1252 named (no
other encoding is read), comma, semicolon or tab between fields, quoted fields holding
newlines, blank lines, or one address per line.

A file is read twice, in constant memory: :func:`inspect` streams it once to check its size and
its encoding (before anything is stored) and to read its first line, then
:func:`~._lines.read_lines` streams its lines, every one accounted for.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from email.header import decode_header, make_header
from typing import BinaryIO

from ...errors import InvalidRequest

#: Bytes read at a time.
BLOCK = 1 << 20
#: The delimiters a file may use, in the order a tie is settled.
DELIMITERS = (",", ";", "\t")
#: The only encodings a file is read in, by the name this module gives each, in words.
ENCODING_WORDS = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8 with a byte-order mark",
    "utf-16": "UTF-16 with a byte-order mark",
    "latin-1": "Latin-1",
    "cp1252": "Windows-1252",
}
#: Every spelling Python's codec registry gives one of :data:`ENCODING_WORDS` (``latin1``,
#: ``ISO-8859-1``, ``windows-1252``, ``UTF16``...), by the registry's name for it.
_CLOSED_CODECS = {codecs.lookup(name).name: name for name in ENCODING_WORDS}
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: A display name longer than a mail header line is shown as it is, not decoded.
_MAX_ENCODED_NAME = 998


@dataclass(frozen=True)
class ImportSource:
    """A file to import: ``open`` gives a new binary stream of it from its start each time it
    is called; ``name`` says what it is (a file name, never its content)."""

    name: str
    open: Callable[[], BinaryIO]

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> ImportSource:
        """The file at ``path``."""
        return cls(os.fspath(path), lambda: open(path, "rb"))

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "upload") -> ImportSource:
        """A file held in memory (a small upload, a test)."""
        return cls(name, lambda: io.BytesIO(data))


@dataclass(frozen=True)
class FileShape:
    """What :func:`inspect` found: the file's size in bytes and its number of lines, the
    encoding and delimiter to read it with (``delimiter`` is ``None`` for a plain list of one
    address per line), and its first non-blank line, whole and as fields."""

    size: int
    lines: int
    encoding: str
    encoding_detected: bool
    delimiter: str | None
    first_fields: tuple[str, ...]
    first_line: str = ""

    @property
    def encoding_label(self) -> str:
        """The encoding in words, as a report shows it."""
        label = ENCODING_WORDS.get(self.encoding, self.encoding)
        return f"{label} (detected)" if self.encoding_detected else label

    @property
    def delimiter_label(self) -> str:
        """The delimiter in words."""
        names = {",": "comma", ";": "semicolon", "\t": "tab"}
        return "one address per line" if self.delimiter is None else names[self.delimiter]


def inspect(
    source: ImportSource,
    *,
    max_bytes: int,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> FileShape:
    """Read ``source`` once: refuse it (:class:`InvalidRequest` naming ``file``) when it holds
    more than ``max_bytes`` bytes or nothing, and (naming ``encoding``) when ``encoding`` is
    not one of :data:`ENCODING_WORDS`, when UTF-16 text has no byte-order mark, or when the
    file does not decode. Without ``encoding``, a UTF-16 byte-order mark means UTF-16, else
    UTF-8 is tried and Latin-1 taken when it fails. The delimiter (``delimiter`` when given)
    is found from the first non-blank line."""
    codec = closed_codec(encoding) if encoding else None
    if delimiter is not None and delimiter not in DELIMITERS:
        raise InvalidRequest("delimiter must be a comma, a semicolon or a tab", field="delimiter")
    size = lines = 0
    ends_line = True
    utf8 = codecs.getincrementaldecoder("utf-8")()
    named: codecs.IncrementalDecoder | None = None
    is_utf8 = True
    head = b""
    with source.open() as stream:
        while block := stream.read(BLOCK):
            if size == 0:
                codec = codec or ("utf-16" if block.startswith(_UTF16_BOMS) else None)
                if codec == "utf-16" and not block.startswith(_UTF16_BOMS):
                    raise _no_bom()
                named = codecs.getincrementaldecoder(codec)() if codec else None
            size += len(block)
            if size > max_bytes:
                raise InvalidRequest(
                    f"the file is larger than the limit of {max_bytes:,} bytes "
                    "(setting import_max_bytes); nothing was imported",
                    field="file",
                )
            if len(head) < BLOCK:
                head += block[: BLOCK - len(head)]
            if named is not None:
                text = _decode(named, block, codec or "", size - len(block))
            else:
                text = ""
                if is_utf8:
                    try:
                        utf8.decode(block)
                    except UnicodeDecodeError:
                        is_utf8 = False
            if codec == "utf-16":  # a newline is two bytes, and 0x0A may be half of another
                lines += text.count("\n")
                ends_line = text.endswith("\n") if text else ends_line
            else:
                lines += block.count(b"\n")
                ends_line = block.endswith(b"\n")
        if named is not None:
            _decode(named, b"", codec or "", size, final=True)
        elif is_utf8:
            try:
                utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                is_utf8 = False
    if size == 0:
        raise InvalidRequest("the file is empty; nothing was imported", field="file")
    if not ends_line:
        lines += 1
    detected = not encoding
    if codec is None:
        if not is_utf8:
            codec = "latin-1"
        else:
            codec = "utf-8-sig" if head.startswith(codecs.BOM_UTF8) else "utf-8"
    first = _first_line(head.decode(codec, errors="replace"))
    found = delimiter or _delimiter_of(first)
    fields = tuple(_fields_of(first, found))
    return FileShape(
        size=size,
        lines=lines,
        encoding=codec,
        encoding_detected=detected,
        delimiter=found,
        first_fields=fields,
        first_line=first,
    )


def closed_codec(encoding: str) -> str:
    """The name :data:`ENCODING_WORDS` gives ``encoding`` (any spelling Python knows of one
    of them); :class:`InvalidRequest` naming ``encoding`` for any other name, a codec that
    is not a text encoding (``hex``, ``rot13``) included."""
    try:
        found = _CLOSED_CODECS.get(codecs.lookup(encoding).name)
    except (LookupError, TypeError, ValueError):
        found = None
    if found is None:
        raise InvalidRequest(
            f"an import is not read in the encoding {encoding[:40]!r}; name UTF-8, UTF-16 "
            "(with a byte-order mark), Latin-1 or Windows-1252, or leave it out to detect "
            "UTF-8, UTF-16 or Latin-1",
            field="encoding",
        )
    return found


def is_listed_line(line: str) -> bool:
    """Whether ``line`` is a plain list's line: ``Name <address>`` (the name may hold a comma,
    as Mailman prints ``Last, First <address>``), or an address alone."""
    if listed_address(line) is None:
        return False
    return "<" in line or not any(delimiter in line for delimiter in DELIMITERS)


def listed_address(line: str) -> tuple[str, str | None] | None:
    """``(address, name or None)`` of a plain list's line (``Name <address>`` or a bare
    address), or ``None`` when the line is neither. Each character is looked at a bounded
    number of times: the time is linear in the line, whatever it holds."""
    text = line.strip()
    if text.endswith(">"):
        opens = text.rfind("<")
        name, angled = text[: max(opens, 0)], text[opens + 1 : -1]
        well_formed = opens >= 0 and angled and ">" not in angled and not _has_space(angled)
        if well_formed and "<" not in name and ">" not in name:
            return angled, (_display_name(name) or None)
    if "@" in text[1:-1] and not _has_space(text):
        return text, None
    return None


def _has_space(text: str) -> bool:
    return any(char.isspace() for char in text)


def _display_name(text: str) -> str:
    """A display name as Mailman prints it: quotes taken off, encoded words decoded."""
    text = text.strip().strip('"').strip()
    if "=?" not in text or len(text) > _MAX_ENCODED_NAME:
        return text
    try:
        return str(make_header(decode_header(text)))
    except (LookupError, UnicodeDecodeError, ValueError):
        return text


def _no_bom() -> InvalidRequest:
    return InvalidRequest(
        "UTF-16 text must start with a byte-order mark, and this file does not; save it "
        "again as UTF-16 with one (Excel's Unicode text), or as UTF-8",
        field="encoding",
    )


def _decode(
    decoder: codecs.IncrementalDecoder,
    block: bytes,
    codec: str,
    offset: int,
    *,
    final: bool = False,
) -> str:
    try:
        return decoder.decode(block, final=final)
    except UnicodeDecodeError as exc:
        raise InvalidRequest(
            f"the file is not {ENCODING_WORDS.get(codec, codec)} text (byte "
            f"{offset + exc.start + 1:,} does not decode); name its encoding, or leave it out "
            "to detect UTF-8, UTF-16 or Latin-1",
            field="encoding",
        ) from None


def _first_line(text: str) -> str:
    """The first non-blank line of ``text`` (a quoted newline in it is not followed: a
    header holds none)."""
    for line in text.lstrip("\ufeff").splitlines():
        if line.strip():
            return line
    return ""


def _delimiter_of(line: str) -> str | None:
    """The delimiter found most often outside quotes in ``line``; ``None`` when none is (a
    plain list, or a file of one column)."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else None


def _fields_of(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return [line.strip()]
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:  # a field longer than the CSV reader's limit
        raise InvalidRequest(
            f"the first line holds a field of more than {csv.field_size_limit():,} characters, "
            "so it cannot name the columns; check its quotes and delimiters",
            field="file",
        ) from None
