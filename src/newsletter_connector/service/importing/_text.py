"""An upload kept as UTF-8 text: decoded once, as it arrives, in the encoding it came in (a
UTF-16 byte-order mark means UTF-16; else UTF-8, or Latin-1 when it is not UTF-8), and given
back in that encoding's bytes when it is read, so the editor may still choose how to read it
(a Latin-1 file as Windows-1252, say). Kept as text, an address in it is found whatever the
file's encoding (docs/importing.md, "Encodings").
"""

from __future__ import annotations

import codecs
import io
from typing import Any, BinaryIO

from ...errors import InvalidRequest

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: Characters read at a time when the text is given back.
_CHARS = 1 << 18


class ArrivingText:
    """The decoder of one upload: :meth:`part` gives each block's text as UTF-8 bytes,
    :meth:`finish` says whether the parts stored so far must be rewritten (a file found not
    to be UTF-8 is Latin-1: each byte its own character). ``encoding`` is known once the first
    block is read, and final once :meth:`finish` returns; ``lines`` counts the text's lines."""

    def __init__(self) -> None:
        self.encoding = "utf-8"
        self.lines = 0
        self._ends_line = True
        self._size = 0
        self._decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")()

    def part(self, block: bytes) -> bytes:
        """``block``'s text in UTF-8; :class:`InvalidRequest` naming ``file`` when a UTF-16
        file does not decode."""
        if self._size == 0:
            if block.startswith(_UTF16_BOMS):
                self.encoding = "utf-16"
                self._decoder = codecs.getincrementaldecoder("utf-16")()
            elif block.startswith(codecs.BOM_UTF8):
                self.encoding = "utf-8-sig"
        offset = self._size
        self._size += len(block)
        if self.encoding == "utf-16":
            text = self._utf16(block, offset)
            self._count(text.count("\n"), text, "\n")
            return text.encode("utf-8")
        self._count(block.count(b"\n"), block, b"\n")
        if self.encoding != "latin-1":
            try:
                self._decoder.decode(block)
            except UnicodeDecodeError:
                self.encoding = "latin-1"
        return block

    def finish(self) -> bool:
        """End the file: whether the parts stored so far must each be rewritten with
        :func:`latin1_as_utf8`. :class:`InvalidRequest` naming ``file`` when a UTF-16 file
        ends in the middle of a character."""
        if self.encoding == "utf-16":
            self._utf16(b"", self._size, final=True)
        elif self.encoding != "latin-1":
            try:
                self._decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.encoding = "latin-1"
        if not self._ends_line:
            self.lines += 1
        return self.encoding == "latin-1"

    def _count(self, newlines: int, text: Any, newline: Any) -> None:
        self.lines += newlines
        if text:
            self._ends_line = text.endswith(newline)

    def _utf16(self, block: bytes, offset: int, *, final: bool = False) -> str:
        try:
            return self._decoder.decode(block, final=final)
        except UnicodeDecodeError as exc:
            raise InvalidRequest(
                "the file starts as UTF-16 text (it has a UTF-16 byte-order mark), but byte "
                f"{offset + exc.start + 1:,} does not decode; nothing was stored",
                field="file",
            ) from None


def latin1_as_utf8(part: bytes) -> bytes:
    """A stored part of a file that arrived in Latin-1, as UTF-8 text."""
    return part.decode("latin-1").encode("utf-8")


class GivenBack(io.RawIOBase):
    """The stored UTF-8 text ``stream`` in the bytes of ``encoding`` (the one it arrived in):
    the same bytes for UTF-8 and Latin-1, the same text for UTF-16 (with its byte-order
    mark)."""

    def __init__(self, stream: BinaryIO, encoding: str) -> None:
        self._text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        self._encoder = codecs.getincrementalencoder(encoding)()
        self._buffer = b""
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer and not self._ended:
            chars = self._text.read(_CHARS)
            self._ended = not chars
            self._buffer = self._encoder.encode(chars, final=self._ended)
        count = min(len(target), len(self._buffer))
        target[:count] = self._buffer[:count]
        self._buffer = self._buffer[count:]
        return count

    def close(self) -> None:
        self._text.close()
        super().close()


def given_back(stream: BinaryIO, encoding: str) -> BinaryIO:
    """``stream`` (stored UTF-8 text) as bytes of ``encoding``: itself for UTF-8, else a
    :class:`GivenBack` reader."""
    if encoding in ("utf-8", "utf-8-sig"):
        return stream
    return io.BufferedReader(GivenBack(stream, encoding))
