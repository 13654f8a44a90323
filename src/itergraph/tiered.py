"""The engine ``"auto"`` on JAX: no call after the first waits for a compile.

XLA compiles one program per input signature. Where shapes vary from call to call (audio
chunks, prompts), a plain JAX session pays a compile, hundreds of milliseconds, on the first
call of every new shape. `TieredRunner` answers such a call on the NumPy backend instead and
compiles the signature on a worker thread; later calls of that signature run the compiled
program. So:

    first call ever          -> compiled now, run on JAX (compile + first run, as `Session`)
    a signature compiled     -> JAX
    a new signature          -> NumPy now; queued to compile in the background
    a signature JAX refused  -> NumPy (the background run raised: the NumPy run is the answer)

Both engines compute the same function (the NumPy one is the reference), so a result may
differ from the compiled one only by float rounding. One compile runs at a time, under the
lock that also guards the planner; the queue holds at most `MAX_PENDING` signatures (others
are queued again when they come back).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import numpy as np

MAX_PENDING = 8


class TieredRunner:
    """``runner(feeds)`` for a `backends.jax.program.CompiledGraph` and the NumPy plan of the
    same graph (see module docstring)."""

    def __init__(self, cg, numpy_run, max_iterations: int | None):
        self.cg = cg
        self.numpy_run = numpy_run
        self.max_iterations = max_iterations
        self.lock = threading.Lock()  # held while the planner runs (compiles included)
        self.pending: deque = deque()
        self.queued: set = set()
        self.refused: set = set()
        self.started = False
        self.worker: threading.Thread | None = None
        self.compiled_in_background = 0
        self.answered_by_numpy = 0

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any]:
        cg, mi = self.cg, self.max_iterations
        if not self.started:
            with self.lock:
                out = cg.run(feeds, max_iterations=mi)
            self.started = True
            return out
        if self.lock.acquire(blocking=False):
            try:
                key = cg.signature(feeds, mi)
                if key is None or cg.compiled_for(key):
                    return cg.run(feeds, max_iterations=mi)
            finally:
                self.lock.release()
        else:  # a compile is running: only a prepared call goes without the planner
            key = cg.signature(feeds, mi)
            fast = cg.prepared_call(key)
            if fast:
                out = fast(feeds)
                if out is not None:
                    return out
        if key is not None and key not in self.refused:
            self._queue(key, feeds)
        self.answered_by_numpy += 1
        return self.numpy_run(feeds)

    def _queue(self, key, feeds) -> None:
        if key in self.queued or len(self.pending) >= MAX_PENDING:
            return
        copy = {k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in feeds.items()}
        self.queued.add(key)
        self.pending.append((key, copy))
        if self.worker is None or not self.worker.is_alive():
            self.worker = threading.Thread(target=self._drain, name="itergraph-compile",
                                           daemon=True)
            self.worker.start()

    def _drain(self) -> None:
        while self.pending:
            key, feeds = self.pending.popleft()
            with self.lock:
                try:
                    self.cg.run(feeds, max_iterations=self.max_iterations)
                    self.compiled_in_background += 1
                except Exception:  # the NumPy answer stands; this signature stays there
                    self.refused.add(key)
            self.queued.discard(key)

    def wait(self, timeout: float | None = None) -> None:
        """Wait until the queued compiles are done (for tests and benchmarks)."""
        w = self.worker
        if w is not None:
            w.join(timeout)
