"""A source file as the readers take it: a regular file, unchanged while it is read, its bytes hashed as read.

Three things a source file can do to a build that its content check cannot see:

* **not be a file.** A named pipe (FIFO) blocks the first ``open`` until someone writes to it, and
  a device such as ``/dev/zero`` never ends; either hangs the build without a word. Only regular
  files are read (:func:`regular_file_state`); the check looks at the path without opening it, and
  every open is non-blocking and checked to be that same file (:meth:`WatchedSource.open`).
* **change while it is read.** A file cut short at a line end parses as a file with fewer rows, and
  one rewritten in place mixes two versions. :class:`WatchedSource` records the file's identity,
  size, modification and change times before the first byte is read, and compares them once the
  last byte is read (:meth:`WatchedSource.finish`): any difference ends the build (exit 2, "changed
  while being read"), as does a read that got more or fewer bytes than the file held.
* **be described by bytes that were not the ones read.** The SHA-256 the build report gives for a
  source is that of the bytes one full pass of the reading actually received (:meth:`WatchedSource.hashing`),
  not of a second reading of the file. Readers that read a file more than once (a UTF-8 scan, then
  the parser; Arrow's CSV reader, then Python's for the rest of the file) hash one sequential full
  pass, and the unchanged state over the whole read ties the other passes to the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from nlue.errors import RowProblem, SourceError

_READ_BUFFER = 1 << 20
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


@dataclass(frozen=True)
class FileState:
    """What changes when a file is replaced, cut, extended or rewritten."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileState:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)

    def difference(self, later: FileState) -> str:
        """How ``later`` differs from this state, in words ("" when it does not)."""
        if (later.device, later.inode) != (self.device, self.inode):
            return "another file now has its name (it was replaced)"
        if later.size != self.size:
            return f"its size went from {self.size:,} to {later.size:,} bytes"
        if later.mtime_ns != self.mtime_ns:
            return "it was written to (its modification time changed)"
        if later.ctime_ns != self.ctime_ns:  # a write with the old time put back, or a change of mode or links
            return "it was changed (its status change time moved)"
        return ""


def _problem(path: Path, reason: str) -> SourceError:
    return SourceError(RowProblem(str(path), 0, "(file)", reason))


def regular_file_state(path: Path) -> FileState:
    """The state of ``path`` (links followed), which must be a regular file; a :class:`SourceError` otherwise.

    The path is not opened: opening a named pipe would wait for a writer.
    """
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise _problem(path, "file not found") from None
    except OSError as exc:
        raise _problem(path, f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")
        raise _problem(
            path,
            f"is {kind}, not a regular file; nlue reads sources from regular files only (a pipe or a device "
            "would be waited on or read without end): save its contents to a file and build from that",
        )
    return FileState.of(status)


class WatchedSource:
    """One source file while a reader reads it (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.before = regular_file_state(self.path)
        self._digest: hashlib._Hash | None = None
        self._hashed = 0
        self.sha256: str | None = None  # set by finish()

    def open(self) -> BinaryIO:
        """The file opened for reading (unbuffered), checked to be the regular file first seen under its name.

        Opened non-blocking, so that a pipe put in the file's place after the first check cannot
        block the open; for a regular file the flag changes nothing.
        """
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            raise self._changed("it was removed") from None
        except OSError as exc:
            raise _problem(self.path, f"cannot be read: {exc.strerror}") from None
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or (status.st_dev, status.st_ino) != (
            self.before.device,
            self.before.inode,
        ):
            os.close(fd)
            raise self._changed("another file now has its name (it was replaced)")
        return os.fdopen(fd, "rb", buffering=0)

    def hashing(self, buffer_size: int = _READ_BUFFER) -> io.BufferedReader:
        """:meth:`open`, buffered, with every byte read fed to a new SHA-256 (the previous pass's is dropped)."""
        self._digest = hashlib.sha256()
        self._hashed = 0
        return io.BufferedReader(_HashingReader(self.open(), self), buffer_size=buffer_size)

    def _update(self, data: memoryview) -> None:
        assert self._digest is not None
        self._digest.update(data)
        self._hashed += len(data)

    def hash_whole(self) -> None:
        """One sequential pass over the file, hashed (for readers that seek, such as Parquet's)."""
        with self.hashing() as handle:
            while handle.read(_READ_BUFFER):
                pass

    def check_unchanged(self) -> None:
        """Raise a :class:`SourceError` when the file is no longer as it was before the first read."""
        try:
            now = FileState.of(os.stat(self.path))
        except FileNotFoundError:
            raise self._changed("it was removed") from None
        except OSError as exc:
            raise _problem(self.path, f"cannot be read: {exc.strerror}") from None
        difference = self.before.difference(now)
        if difference:
            raise self._changed(difference)

    def finish(self) -> str:
        """After the last read: the SHA-256 of the bytes one full pass read; raise if the file changed meanwhile."""
        self.check_unchanged()
        if self._digest is None:
            self.hash_whole()
            self.check_unchanged()
        if self._hashed != self.before.size:
            raise self._changed(f"{self._hashed:,} bytes were read of the {self.before.size:,} it held")
        assert self._digest is not None
        self.sha256 = self._digest.hexdigest()
        return self.sha256

    def _changed(self, what: str) -> SourceError:
        return _problem(
            self.path,
            f"changed while being read ({what}); nothing built from it can be trusted: build again once "
            "the file is complete, or from a copy that nothing writes to",
        )


def keep_digest(digests: dict[Path, str], source: WatchedSource) -> None:
    """Keep the SHA-256 of the bytes a finished reading of ``source`` read; a file read again (a split read a
    second time) must give the same bytes, or it changed between the readings."""
    assert source.sha256 is not None
    if digests.setdefault(source.path, source.sha256) != source.sha256:
        raise source._changed("its second reading gave other bytes than the first")


class _HashingReader(io.RawIOBase):
    """A raw reader that feeds every byte it returns to its :class:`WatchedSource`'s digest."""

    def __init__(self, raw: BinaryIO, source: WatchedSource) -> None:
        self._raw = raw
        self._source = source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        count = self._raw.readinto(buffer)
        if count:
            self._source._update(memoryview(buffer)[:count])
        return count or 0

    def close(self) -> None:
        self._raw.close()
        super().close()
