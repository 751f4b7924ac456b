"""The folder ``opsmate watch`` writes its reports to (``--out``), so that no notification
is acknowledged and then lost.

- :meth:`ReportFolder.check` at start: the folder exists (or is created), a file can be
  written there and enough space is free; otherwise a usage error (exit 2) before
  anything listens.
- :meth:`ReportFolder.problem` before each notification is acknowledged: the same probe
  (a small file written, flushed to disk and removed); a reason makes the receiver
  answer 503, so Alertmanager keeps the notification and retries.
- :meth:`ReportFolder.write` writes a report's files all or nothing, each through a
  temporary file renamed into place; a temporary file is never left behind. Files that
  could not be written (the disk filled up after the probe) are kept in memory, said in
  the log, and written as soon as the folder can take them again (the next probe, or
  :meth:`flush` at shutdown).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from opsmate.errors import ExitCode, OpsmateError, UsageError

MIN_FREE_BYTES = 4 << 20  # below this a report (tens of KiB) and its history may not fit
MAX_PENDING = 64  # reports kept in memory while the folder cannot take them


class ReportWriteError(OpsmateError):
    """A report's files could not be written (kept and retried; at exit: lost, exit 1)."""

    exit_code = ExitCode.PARTIAL


class ReportFolder:
    """``--out``: probed, written atomically, with unwritten reports kept for a retry."""

    def __init__(
        self, path: Path, log: Callable[[str], None] | None = None, *, min_free: int | None = None
    ) -> None:
        self.path = path
        self.log = log or (lambda _line: None)
        self.min_free = MIN_FREE_BYTES if min_free is None else min_free
        self._lock = threading.Lock()
        self._pending: list[dict[Path, str]] = []

    @property
    def pending(self) -> int:
        """Reports written to no file yet."""
        with self._lock:
            return len(self._pending)

    def check(self) -> None:
        """At start: create the folder and probe it; UsageError naming what is wrong."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out {self.path}: cannot create the folder: {exc}") from exc
        why = self._probe()
        if why:
            raise UsageError(
                f"--out {self.path}: {why}", hint="give a folder opsmate can write reports to"
            )

    def problem(self) -> str | None:
        """Why a report could not be written now (None: it can); writes the reports kept
        from an earlier failure first when it can."""
        why = self._probe()
        if why is None and self.pending:
            self.flush()
            if self.pending:
                return "reports from an earlier failure are still not written"
        return why

    def _probe(self) -> str | None:
        if not self.path.is_dir():
            return "not a folder (any more)"
        try:
            free = shutil.disk_usage(self.path).free
        except OSError as exc:
            return f"cannot read its free space: {exc.strerror or exc}"
        if free < self.min_free:
            return f"only {free} bytes free (at least {self.min_free} needed)"
        probe = self.path / f".opsmate-probe-{os.getpid()}-{threading.get_ident()}"
        try:
            with probe.open("wb") as fh:
                fh.write(b"opsmate write probe\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            return f"cannot write a file there: {exc.strerror or exc}"
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()
        return None

    def write(self, files: dict[Path, str]) -> None:
        """Write ``files`` (path -> text) all or nothing. On failure nothing of them is left
        in the folder, they are kept for :meth:`flush`, and ReportWriteError says why."""
        try:
            _write_all(files)
        except OSError as exc:
            with self._lock:
                if len(self._pending) < MAX_PENDING:
                    self._pending.append(dict(files))
                    kept = "kept in memory; written when the folder can take it again"
                else:
                    kept = f"lost: {MAX_PENDING} reports already wait for the folder"
            names = ", ".join(p.name for p in files)
            raise ReportWriteError(
                f"{names} not written to {self.path}: {exc.strerror or exc} ({kept})"
            ) from exc

    def flush(self) -> int:
        """Write the reports kept from earlier failures; how many were written."""
        with self._lock:
            waiting, self._pending = self._pending, []
        done = 0
        for i, files in enumerate(waiting):
            try:
                _write_all(files)
            except OSError as exc:
                with self._lock:
                    self._pending = waiting[i:] + self._pending
                self.log(f"{len(waiting) - i} report(s) still not written: {exc.strerror or exc}")
                break
            done += 1
            self.log(f"wrote {', '.join(p.name for p in files)} (kept after a failed write)")
        return done


def _write_all(files: dict[Path, str]) -> None:
    """Each file through ``<name>.tmp`` renamed into place; on any failure, the temporary
    file and the files of this set already written are removed, and the error raised."""
    written: list[Path] = []
    try:
        for path, text in files.items():
            _write_one(path, text)
            written.append(path)
    except OSError:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        raise


def _write_one(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    data = text.encode("utf-8", "replace")  # a lone surrogate becomes "?", never an error
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
