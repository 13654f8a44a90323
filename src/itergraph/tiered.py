"""The engine ``"auto"`` where JAX can run the model: no call waits for a compile, and each
input signature runs on the engine that is faster for it.

XLA compiles one program per input signature, and a compiled call has a fixed cost (tens of
microseconds) that a small model's NumPy plan does not pay, while a long loop runs 10-100x
faster compiled. Neither can be told from the graph alone (a trip count is often an input),
so `TieredRunner` measures, per signature (the feeds' shapes and dtypes):

    a new signature          -> NumPy answers; the signature compiles on a worker thread
    compiled, not yet judged -> a JAX warm-up call, then each call runs on both engines,
                                timed (the same feeds: a signature's calls may differ in
                                work, a trip count fed as a value)
    judged                   -> the engine with the lower median of `TRIALS` calls, or
                                after `CLEAR_TRIALS` calls the engine whose slowest call
                                took under half the other's fastest (a compiled
                                generation loop against its NumPy kernel: 10x)
    JAX refused it           -> NumPy (the background run raised: NumPy's answer stands)

The turns are timed only once the compile is done, so that neither engine shares the cores
with it, and medians are compared (a single fast or slow call, as a shared machine gives,
does not decide).

Both engines compute the same function (the NumPy one is the reference), so results differ
only by float rounding. One compile runs at a time, under the lock that also guards the
planner; at most `MAX_PENDING` signatures wait for it, and after `MAX_COMPILED` signatures
new ones stay on NumPy (shapes that never repeat would otherwise keep a core compiling).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections import deque
from typing import Any

import numpy as np

MAX_PENDING = 8
MAX_COMPILED = 64
TRIALS = 7  # timed calls per engine and signature before judging
CLEAR_TRIALS = 3  # fewer calls judge where one engine is clearly faster (see `_Verdict`)


class _Verdict:
    __slots__ = ("times", "warm", "choice")

    def __init__(self):
        self.times: dict[str, list[float]] = {"numpy": [], "jax": []}
        self.warm = False  # JAX's first call on this signature was made (untimed)
        self.choice: str | None = None  # "numpy" or "jax" once judged

    def record(self, jax: float, numpy: float) -> None:
        """One call's time on each engine, on the same feeds."""
        self.times["jax"].append(jax)
        self.times["numpy"].append(numpy)
        j, n = self.times["jax"], self.times["numpy"]
        if len(j) >= TRIALS:
            jax, numpy = (float(np.median(self.times[e])) for e in ("jax", "numpy"))
            self.choice = "jax" if jax < numpy else "numpy"
        elif len(j) >= CLEAR_TRIALS and (2 * max(j) < min(n) or 2 * max(n) < min(j)):
            # every call at least twice as fast: more turns would only cost slow calls
            self.choice = "jax" if max(j) < min(n) else "numpy"


#: every runner, so that exiting the interpreter can wait for a compile under way
_RUNNERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _finish_compiles() -> None:
    """At exit, no new compile starts and the one under way finishes: a daemon thread stopped
    inside XLA aborts the process ("terminate called ... exception not rethrown", exit status
    134) after a script that ran a model on the default engine has ended."""
    for runner in list(_RUNNERS):
        runner.pending.clear()
        w = runner.worker
        if w is not None and w.is_alive():
            w.join()


class TieredRunner:
    """``runner(feeds)`` over a `backends.jax.program.CompiledGraph` and a function running
    the same graph's NumPy plan (see module docstring)."""

    def __init__(self, cg, numpy_run, max_iterations: int | None):
        self.cg = cg
        self.numpy_run = numpy_run
        self.max_iterations = max_iterations
        self.lock = threading.Lock()  # held while the planner runs (compiles included)
        self.verdicts: dict[tuple, _Verdict] = {}
        self.pending: deque = deque()
        self.queued: set = set()
        self.refused: set = set()
        self.worker: threading.Thread | None = None
        self.compiled_in_background = 0
        _RUNNERS.add(self)

    def engine_for(self, feeds: dict[str, Any]) -> str | None:
        """The engine this signature was judged to run on (None: not judged yet)."""
        v = self.verdicts.get(self.cg.signature(feeds, self.max_iterations))
        return None if v is None else v.choice

    def direct(self, feeds: dict[str, Any]):
        """The call a judged signature runs on (`Session.run` calls it straight): NumPy's
        run or JAX's prepared call; None: not judged yet; False: none will be (an input
        whose value picks the program, a signature that is not one compiled program)."""
        if self.cg.promoted_names():
            return False
        key = self.cg.signature(feeds, self.max_iterations)
        v = None if key is None else self.verdicts.get(key)
        if v is None or v.choice is None:
            return None if key is not None else False
        if v.choice == "numpy":
            return self.numpy_run
        return self.cg.prepared_call(key) or False

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any]:
        key = self.cg.signature(feeds, self.max_iterations)
        if key is None:  # sequences, optionals, device arrays: the reference engine
            return self.numpy_run(feeds)
        v = self.verdicts.get(key)
        if v is None:
            if len(self.verdicts) >= 4 * MAX_COMPILED:
                return self.numpy_run(feeds)
            v = self.verdicts[key] = _Verdict()
        if v.choice == "numpy":
            return self.numpy_run(feeds)
        if v.choice == "jax":
            out = self._jax(feeds, key)
            if out is not None:
                return out
        elif self.cg.compiled_for(key) and key not in self.refused:
            t0 = time.perf_counter()
            out = self._jax(feeds, key)
            if out is not None:
                t1 = time.perf_counter()
                if not v.warm:
                    v.warm = True
                    return out
                self.numpy_run(feeds)
                v.record(t1 - t0, time.perf_counter() - t1)
                return out
        if key in self.refused or (not self.cg.compiled_for(key)
                                   and self.compiled_in_background >= MAX_COMPILED):
            v.choice = "numpy"
        elif not self.cg.compiled_for(key):
            self._queue(key, feeds)
        return self.numpy_run(feeds)

    def _jax(self, feeds, key) -> dict[str, Any] | None:
        """JAX's answer, or None when it cannot give one without waiting for the planner."""
        fast = self.cg.prepared_call(key)
        if fast:
            out = fast(feeds)
            if out is not None:
                return out
        if not self.lock.acquire(blocking=False):
            return None
        try:
            return self.cg.run(feeds, max_iterations=self.max_iterations)
        finally:
            self.lock.release()

    def _queue(self, key, feeds) -> None:
        if key in self.queued or len(self.pending) >= MAX_PENDING:
            return
        copy = {k: np.array(x) if isinstance(x, np.ndarray) else x for k, x in feeds.items()}
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
