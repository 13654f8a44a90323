"""Progress of long loops on a stream, in tqdm's format: steps done, rate, elapsed, and with
a known total (a loop with no condition: its trip count or shortest sliced input) the
percentage, a bar and the time left.

`Reporter` is the callback `Model.run(progress=...)` takes. It prints at most one line per
`interval` seconds while a loop runs, and always one final line when it stops. A loop's
clock starts at its first report (the time spent loading and preparing the model before it
is not the loop's), the steps before that counted at the rate measured after it:

    itergraph: loop 'encoder':  45%|████▌     | 2250/5000 [00:00<00:01, 2393.62step/s]
    itergraph: loop 'encoder' done: 100%|██████████| 5000/5000 [00:02<00:00, 2401.70step/s]

On a terminal the running line is rewritten in place (carriage return); elsewhere each is its
own line. A compiled JAX loop reports only that it finished (``steps`` is -1). The lines are
formatted by ``tqdm.format_meter``, so they read as every tqdm bar does.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ..meter import meter


class Reporter:
    """Prints progress of outermost loops to `stream` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None, interval: float = 0.5,
                 clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.clock = clock
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = clock()  # when the current outermost loop began (about)
        self.next_at = self.started + interval
        self.lines: list[str] = []  # every line written, for callers that summarise
        self.seen: tuple[str, int, float] | None = None  # (loop, steps, time) first reported

    def __call__(self, loop: str, steps: int, done: bool = False,
                 total: int | None = None) -> None:
        now = self.clock()
        first = self.seen is None or self.seen[0] != loop or steps < self.seen[1]
        if first:  # the loop's first report: its clock starts here, not at the run's start
            self.seen = (loop, steps, now)
            if not done:
                return
        if not done and now < self.next_at:
            return
        self.next_at = now + self.interval
        _, s0, t0 = self.seen
        if steps > s0 > 0 and now > t0:  # the steps before the first report at the same rate
            elapsed = (now - t0) * steps / (steps - s0)
        else:
            elapsed = max(now - (t0 if s0 == 0 and not first else self.started), 1e-9)
        if steps < 0:
            text = (f"itergraph: loop '{loop}' done (compiled whole, steps not counted), "
                    f"{elapsed:.2f} s")
        else:
            text = meter(f"itergraph: loop '{loop}'" + (" done" if done else ""), steps,
                         total if total is None or total >= steps else None, elapsed)
        self.lines.append(text)
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K" + ("\n" if done else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        if done:
            self.started = now
            self.next_at = now + self.interval
            self.seen = None


def wanted(flag: bool | None, stream: TextIO | None = None) -> bool:
    """Whether to show progress: `flag` when given (``--progress``/``--no-progress``), else
    whether `stream` (stderr) is a terminal."""
    if flag is not None:
        return flag
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


__all__ = ["Reporter", "wanted"]
