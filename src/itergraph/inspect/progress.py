"""Progress lines for long loops: steps done and rate of each outermost loop, on a stream.

`Reporter` is the callback `Model.run(progress=...)` takes. It prints at most one line per
`interval` seconds while a loop runs, and always one final line when it stops:

    itergraph: loop 'encoder': 1200 steps, 2398.1 steps/s, 0.50 s
    itergraph: loop 'encoder': done, 5000 steps, 2401.7 steps/s, 2.08 s

On a terminal the running line is rewritten in place (carriage return); elsewhere each is its
own line. A compiled JAX loop reports only that it finished (``steps`` is -1).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


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

    def __call__(self, loop: str, steps: int, done: bool = False) -> None:
        now = self.clock()
        if not done and now < self.next_at:
            return
        self.next_at = now + self.interval
        elapsed = max(now - self.started, 1e-9)
        if steps < 0:
            text = f"itergraph: loop '{loop}': done (compiled whole, steps not counted), " \
                   f"{elapsed:.2f} s"
        else:
            state = "done, " if done else ""
            text = (f"itergraph: loop '{loop}': {state}{steps} steps, "
                    f"{steps / elapsed:.1f} steps/s, {elapsed:.2f} s")
        self.lines.append(text)
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K" + ("\n" if done else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        if done:
            self.started = now
            self.next_at = now + self.interval


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
