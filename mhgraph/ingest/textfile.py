"""A UTF-8 text file read block by block, for parsers that must not hold the whole file.

The window keeps what has not been consumed yet (about one block, more only while one record is
longer than that), so a corpus ten times larger needs no more memory to parse; line and column
numbers stay exact for error messages. A file whose name ends in .gz is read through gzip
(line numbers are those of the decompressed text).
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from pathlib import Path
from typing import BinaryIO

from mhgraph.errors import InputError

BLOCK_BYTES = 1 << 18
WHITESPACE = " \t\r\n"


def is_gzip(path: Path) -> bool:
    return path.suffix.lower() == ".gz"


def plain_suffix(path: Path) -> str:
    """The file's extension under a .gz (corpus.json.gz: .json)."""
    return Path(path.stem).suffix.lower() if is_gzip(path) else path.suffix.lower()


class TextWindow:
    """`text[pos:]` is the unread part of the file that has been decoded so far; `fill()` decodes more.

    `universal_newlines` turns CRLF and lone CR into LF (as text mode does), also across blocks.
    """

    def __init__(self, path: Path, *, universal_newlines: bool = False, block_bytes: int | None = None) -> None:
        self.path = path
        self.universal_newlines = universal_newlines
        self.block_bytes = block_bytes or BLOCK_BYTES
        self.text = ""
        self.pos = 0
        self.eof = False
        self._first_line = 1        # line of text[0]
        self._first_column = 1      # column of text[0] on that line
        self._counted = (0, 1)      # (index, its line): line numbers are counted on, not recounted
        self._held_cr = False       # a CR at a block's end may be the first half of CRLF
        self._newlines_read = 0     # in the raw bytes read so far, for decoding errors
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        try:
            self._file: BinaryIO = gzip.open(path, "rb") if is_gzip(path) else path.open("rb")
        except OSError as exc:
            raise InputError(path, "", f"cannot read file: {exc.strerror or exc}") from exc

    def __enter__(self) -> TextWindow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    # -- reading -------------------------------------------------------------------------------
    def fill(self) -> bool:
        """Decode more of the file onto `text` (at least as much as it holds, so that re-parsing a
        long record stays linear); False at the end of the file."""
        if self.eof:
            return False
        size = max(self.block_bytes, len(self.text) - self.pos)
        try:
            raw = self._file.read(size)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:   # before OSError: BadGzipFile is one
            raise InputError(self.path, "", f"not a valid gzip file: {exc}") from exc
        except OSError as exc:
            raise InputError(self.path, "", f"cannot read file: {exc.strerror or exc}") from exc
        final = not raw
        try:
            decoded = self._decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            # exc.object is the decoder's pending bytes (part of one character) plus this block
            line = self._newlines_read + exc.object[:exc.start].count(b"\n") + 1
            raise InputError(self.path, f"{line}", f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x}); "
                             "convert the file to UTF-8") from exc
        self._newlines_read += raw.count(b"\n")
        if self.universal_newlines:
            decoded = self._translate_newlines(decoded, final)
        self.text += decoded
        if final:
            self.eof = True
        return True

    def _translate_newlines(self, decoded: str, final: bool) -> str:
        if self._held_cr:
            decoded = "\r" + decoded
            self._held_cr = False
        if decoded.endswith("\r") and not final:
            decoded, self._held_cr = decoded[:-1], True
        return decoded.replace("\r\n", "\n").replace("\r", "\n")

    def ensure(self, n: int = 1) -> bool:
        """At least n unread characters, unless the file ends first."""
        while len(self.text) - self.pos < n:
            if not self.fill():
                return False
        return True

    def skip_whitespace(self) -> None:
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text) or not self.fill():
                return

    def peek(self) -> str:
        """The next character ('' at the end of the file)."""
        return self.text[self.pos] if self.ensure(1) else ""

    def consume(self) -> None:
        """Forget what lies before `pos` once it is worth a copy (about half a block)."""
        if self.pos < self.block_bytes // 2:
            return
        dropped = self.text[:self.pos]
        newlines = dropped.count("\n")
        if newlines:
            self._first_column = len(dropped) - dropped.rfind("\n")
        else:
            self._first_column += len(dropped)
        self._first_line += newlines
        self.text = self.text[self.pos:]
        self._counted = (0, self._first_line) if self._counted[0] <= self.pos else \
            (self._counted[0] - self.pos, self._counted[1])
        self.pos = 0

    # -- positions -----------------------------------------------------------------------------
    def line(self, index: int) -> int:
        """The file's line number of text[index]."""
        at, line = self._counted
        if index < at:
            at, line = 0, self._first_line
        line += self.text.count("\n", at, index)
        self._counted = (index, line)
        return line

    def location(self, index: int) -> tuple[int, int]:
        """(line, column) of text[index] in the file."""
        start = self.text.rfind("\n", 0, index)
        column = index - start if start >= 0 else self._first_column + index
        return self.line(index), column
