"""Reading and writing user files without losing anything: encoding, BOM, newlines and mode survive,
and a write is atomic (temp file in the same folder, fsync, rename), so a file is never half written."""

from __future__ import annotations

import codecs
import fcntl
import io
import os
import re
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
    body = data[len(codecs.BOM_UTF8) :] if bom else data
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


class WriteRefused(OSError):
    """The file must not be replaced: the message says why (read-only, hard links, owner we cannot keep)."""


TEMP_SUFFIX = ".neuron-migrate"
#: our temp files: ``.<name, shortened to fit>.<8 random characters>.neuron-migrate`` (tempfile's alphabet)
_TEMP_NAME = re.compile(r"^\..*\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + "$", re.DOTALL)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits, owner and group.

    Refuses (WriteRefused) a file that is read-only, has other hard links (a rename would split them)
    or whose owner or group this process cannot give the new file. While it is written, the temp file
    holds a lock: a run killed mid-write leaves a temp file that a later run knows is stale."""
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222:
        raise WriteRefused(f"read-only file (mode {mode:o}): make it writable to have it rewritten")
    if not os.access(path, os.W_OK):
        raise WriteRefused("this user may not write this file")
    if info.st_nlink > 1:
        raise WriteRefused(f"has {info.st_nlink} hard links: a rewrite would split them")
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{_fitting(path)}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            _lock(handle.fileno(), blocking=True)
            created = os.fstat(handle.fileno())
            if (created.st_uid, created.st_gid) != (info.st_uid, info.st_gid):
                try:
                    os.fchown(handle.fileno(), info.st_uid, info.st_gid)
                except OSError:
                    raise WriteRefused(
                        f"owned by uid {info.st_uid} gid {info.st_gid}: this user cannot keep that owner; "
                        "run as the file's owner"
                    ) from None
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)  # after chown, which clears set-id bits
            os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete the temp files of runs that died mid-write (kill -9) in ``folder``: only names of ours, only
    regular files of this user, only those no live writer holds locked. Returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMP_NAME.match(entry.name):
            continue
        try:
            descriptor = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or not _lock(descriptor, blocking=False):
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
        finally:
            os.close(descriptor)
    return removed


def _lock(descriptor: int, blocking: bool) -> bool:
    """An exclusive advisory lock, released by the kernel when the holder dies; False when held elsewhere."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _fitting(path: Path) -> str:
    """The file's name, shortened so that the temp name stays within the folder's name limit."""
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = limit - len(b"..") - 8 - len(TEMP_SUFFIX)
    name = path.name
    while len(os.fsencode(name)) > room:
        name = name[:-1]
    return name


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, new or not, in one rename: a reader never sees a half-written report."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{_fitting(path)}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def printable(name: str) -> str:
    """A file name as text that can be printed and stored as UTF-8: bytes that are not UTF-8 (kept by the
    file system, carried by Python as surrogates) are shown as ``\\xe9``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
