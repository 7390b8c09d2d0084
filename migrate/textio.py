"""Reading and writing user files without losing anything: encoding, BOM, newlines and mode survive,
and a write is atomic (temp file in the same folder, fsync, rename), so a file is never half written."""

from __future__ import annotations

import codecs
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from migrate.filekinds import FileKind


class DecodeError(ValueError):
    """The bytes are not text in the encoding the file declares (or UTF-8)."""


@dataclass(frozen=True)
class Decoded:
    text: str  # newlines untouched ("\r\n" stays "\r\n")
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode(self.encoding)


def decode(data: bytes, kind: FileKind | None) -> Decoded:
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    encoding = "utf-8"
    if kind is FileKind.PYTHON and not bom:
        try:  # PEP 263 coding cookie
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as error:
            raise DecodeError(str(error)) from None
        if encoding == "utf-8-sig":
            encoding = "utf-8"
    try:
        return Decoded(body.decode(encoding), encoding, bom)
    except (UnicodeDecodeError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        raise DecodeError(f"not valid {encoding} text ({reason})") from None


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits."""
    mode = stat.S_IMODE(path.stat().st_mode)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".neuron-migrate")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
