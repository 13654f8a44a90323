"""A directory of feed files in, one result file per input out: restartable.

A job is a list of ``(input .npz, result .npz)`` pairs, the result paths chosen by the caller
inside one output directory. A result file is complete when it exists and reads as an ``.npz``
archive: it is written to a temporary file in the same directory and renamed over its final
name (`os.replace`, atomic), so a run that is killed leaves finished results and at most some
``.*.part`` files, which the next run deletes. A restart computes only the inputs whose result
is missing or unreadable (cut short by a full disk or an interrupted copy). A result path that
is a symbolic link or not a regular file is refused: nothing is written through a link or
outside the output directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..errors import InputError

PART_SUFFIX = ".part"


def check_result_path(path: Path) -> None:
    if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
        what = "a symbolic link" if path.is_symlink() else "not a regular file"
        raise InputError(f"'{path}' is {what}; itergraph does not write through it (remove "
                         "it or choose another --output-dir)")


def is_complete(path: Path) -> bool:
    """Whether `path` holds a finished result: a readable ``.npz`` archive. One that is cut
    short or unreadable (a disk that filled, a copy interrupted) is not: it is computed again."""
    import zipfile

    check_result_path(path)
    if not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as z:  # reads the directory at the end: a cut file fails
            return all(name.endswith(".npy") for name in z.namelist())
    except (OSError, zipfile.BadZipFile, EOFError):
        return False


def remove_stale_parts(out_dir: Path) -> None:
    """Delete the temporary files a killed run left (ours: ``.NAME.*.part``)."""
    for p in out_dir.iterdir():
        if p.name.startswith(".") and p.name.endswith(PART_SUFFIX) and not p.is_symlink() \
                and p.is_file():
            p.unlink()


def read_feeds(path: Path) -> dict:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read feeds from '{path}': {type(e).__name__}: {e}") from None


def write_atomic(path: Path, outs: dict) -> None:
    """`outs` (its tensor values) as ``path`` (.npz), all or nothing."""
    check_result_path(path)
    tensors = {k: np.asarray(v) for k, v in outs.items() if isinstance(v, np.ndarray)}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=PART_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **tensors)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


class Progress:
    """Inputs done of `total` on stderr in tqdm's format (the same lines as a loop's
    progress, `itergraph.meter`), rewritten in place when stderr is a terminal."""

    def __init__(self, total: int, skipped: int, clock=time.monotonic):
        self.total, self.done, self.skipped = total, skipped, skipped
        self.tty = sys.stderr.isatty()
        self.clock = clock
        self.t0 = clock()
        self._show()

    def step(self, n: int = 1) -> None:
        self.done += n
        self._show()

    def _show(self) -> None:
        if self.tty:
            from ..meter import meter

            line = meter("run-many", self.done - self.skipped, self.total - self.skipped,
                         self.clock() - self.t0, unit="input")
            print(f"\r{line}\x1b[K", end="", file=sys.stderr, flush=True)

    def close(self, out_dir: Path) -> None:
        if self.tty:
            print(file=sys.stderr)
        print(f"run-many: {self.total} inputs: {self.skipped} already done, "
              f"{self.done - self.skipped} computed, results in {out_dir}", file=sys.stderr)


def pending(jobs: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    return [(i, o) for i, o in jobs if not is_complete(o)]


def run_local(model, jobs: list[tuple[Path, Path]], progress: Progress, **run_many_kw) -> None:
    todo = pending(jobs)
    feeds = (read_feeds(i) for i, _ in todo)
    for (_, out), result in zip(todo, model.run_many(feeds, **run_many_kw)):
        write_atomic(out, result)
        progress.step()
