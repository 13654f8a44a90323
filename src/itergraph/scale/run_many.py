"""`run_many`: one model over many inputs, in batches where that is provably exact.

Where the model's inputs carry a batch axis (declared symbolic dimension 0, or named with
``batch_axes={"X": 0}``) and `batch_axis.per_example` proves every output is per example
along it, the inputs are joined along that axis into batches of `batch_size` examples, run
as one call (one compiled program per batch shape), and the results are cut back into one
dict per input. Otherwise every input runs alone on the model's cached plan. Either way the
results come out in input order and equal those of ``model.run`` on each input.

Grouping: a batch only joins inputs whose shapes agree on every axis but the batch axis
(and whose batch-free inputs are equal), so inputs of different sequence lengths go into
different batches; that is the whole of bucketing unless the caller names padding-safe
axes. ``pad_axes={"X": 1}`` with ``buckets=[16, 32, 64]`` pads input X with zeros along axis
1 up to the least bucket length that holds it (longer inputs stay as they are), bounding the
number of shapes to compile; only the caller knows that zero padding leaves the results it
needs unchanged (a loop over the padded steps changes its final state), and the results are
returned as computed on the padded input. The last batch of each shape is filled up with
copies of its last input so that every batch has one shape; their results are dropped.

A stateful model (OpenVINO ``ReadValue``/``Assign``) is never batched: its inputs run one
after another, in order, each a ``model.run`` that reads the state the previous one stored,
as successive calls of an ``InferRequest`` do (joining them into one batch would be one step
of a batch-sized state).

As a safety net, a batched output whose batch extent is not the sum of the inputs' is an
internal error, never a silent answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..analysis.batch_axis import Batched, Verdict, per_example
from ..errors import ExecutionError, InputError
from ..feeds import check_feeds
from ..ir.state import has_state
from ..ir.types import TensorType

MAX_PENDING_BATCHES = 4  # inputs held back for grouping, in batches, before a partial batch runs


def declared_batch_axes(graph) -> dict[str, int]:
    """``{input: 0}`` for each fed tensor input whose declared dimension 0 is symbolic."""
    out = {}
    for v in graph.inputs:
        if v.const is None and isinstance(v.type, TensorType) and v.type.shape and \
                isinstance(v.type.shape[0], str):
            out[v.name] = 0
    return out


def batching_plan(model, batch_axes: dict[str, int] | None = None) -> tuple[dict, Verdict]:
    """The batch axes `run_many` would use and the verdict on them."""
    graph = model.graph
    axes = declared_batch_axes(graph) if batch_axes is None else dict(batch_axes)
    names = {v.name for v in graph.inputs}
    unknown = [n for n in axes if n not in names]
    if unknown:
        raise InputError(f"batch_axes names unknown input(s) {unknown}; the model's inputs "
                         f"are {sorted(names)}")
    if has_state(graph):
        return axes, Verdict(False, "the model has state (ReadValue/Assign): each input is one "
                             "step reading the state the previous one stored", {})
    if not axes:
        return axes, Verdict(False, "no input has a batch axis", {})
    return axes, per_example(graph, axes)


def run_many(model, feeds_iterable: Iterable[dict[str, Any]], batch_size: int = 16,
             backend: str = "numpy", batch_axes: dict[str, int] | None = None,
             buckets: list[int] | None = None, pad_axes: dict[str, int] | None = None,
             devices: Any = None, max_iterations: int | None = None) -> Iterator[dict]:
    """Yield ``model.run(feeds)`` for each feeds dict of `feeds_iterable`, in order (see the
    module docstring). `devices` (``"all"``, a count, or a list of JAX devices; backend jax
    only) shards each batch along its batch axis over those devices, one program."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
    if buckets is not None and (not all(isinstance(b, int) and b > 0 for b in buckets)):
        raise InputError(f"buckets must be positive integer lengths, got {buckets!r}")
    if pad_axes and not buckets:
        raise InputError("pad_axes pads inputs up to bucket lengths: give buckets=[...] too")
    placer = None
    if devices is not None:
        if model.choose_backend(backend) != "jax":
            raise InputError("devices= shards batches over JAX devices: use backend='jax'")
        from .devices import Placer

        placer = Placer(devices)
        batch_size = -(-batch_size // placer.count) * placer.count
    axes, verdict = batching_plan(model, batch_axes)
    runner = _Runner(model, backend, max_iterations, axes, verdict, placer,
                     sorted(buckets or []), dict(pad_axes or {}))
    if not verdict.ok or batch_size == 1:
        for feeds in feeds_iterable:
            yield model.run(runner.padded(feeds), backend=backend,
                            max_iterations=max_iterations)
        return
    yield from runner.batched(feeds_iterable, batch_size)


class _Runner:
    def __init__(self, model, backend, max_iterations, axes, verdict, placer, buckets,
                 pad_axes):
        self.model, self.backend, self.max_iterations = model, backend, max_iterations
        self.axes, self.verdict, self.placer = axes, verdict, placer
        self.buckets, self.pad_axes = buckets, pad_axes
        self.batches_run = 0

    def padded(self, feeds: dict) -> dict:
        if not self.pad_axes:
            return feeds
        out = dict(feeds)
        for name, axis in self.pad_axes.items():
            if name not in out:
                continue
            x = np.asarray(out[name])
            if not -x.ndim <= axis < x.ndim:
                raise InputError(f"pad_axes: input '{name}' has no axis {axis}")
            n = x.shape[axis]
            target = next((b for b in self.buckets if b >= n), n)
            if target > n:
                widths = [(0, 0)] * x.ndim
                widths[axis % x.ndim] = (0, target - n)
                out[name] = np.pad(x, widths)
        return out

    def _signature(self, feeds: dict) -> tuple[Any, int] | None:
        """(group key, examples on the batch axis), or None when the input must run alone."""
        key, extent = [], set()
        for name in sorted(feeds):
            x = feeds[name]
            if not isinstance(x, np.ndarray):
                return None
            if name in self.axes:
                a = self.axes[name] % max(x.ndim, 1)
                extent.add(x.shape[a])
                key.append((name, x.dtype.str, x.shape[:a] + x.shape[a + 1:]))
            else:
                key.append((name, x.dtype.str, x.shape,
                            hashlib.sha1(np.ascontiguousarray(x).tobytes()).hexdigest()))
        if len(extent) != 1:
            return None
        return tuple(key), extent.pop()

    def batched(self, feeds_iterable, batch_size: int) -> Iterator[dict]:
        groups: dict[Any, list] = {}
        done: dict[int, dict] = {}
        next_out = 0
        count = 0
        for i, feeds in enumerate(feeds_iterable):
            count = i + 1
            feeds = check_feeds(self.model.graph, self.padded(feeds))
            sig = self._signature(feeds)
            if sig is None:
                done[i] = self._single(feeds)
            else:
                group = groups.setdefault(sig[0], [])
                group.append((i, feeds, sig[1]))
                if len(group) == batch_size:
                    done.update(self._run_batch(groups.pop(sig[0]), batch_size))
            while len(done) + sum(map(len, groups.values())) > MAX_PENDING_BATCHES * batch_size \
                    and groups:
                oldest = min(groups, key=lambda k: groups[k][0][0])
                done.update(self._run_batch(groups.pop(oldest), batch_size))
                while next_out in done:
                    yield done.pop(next_out)
                    next_out += 1
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
        for key in sorted(groups, key=lambda k: groups[k][0][0]):
            done.update(self._run_batch(groups.pop(key), batch_size))
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
        assert next_out == count and not done

    def _single(self, feeds: dict) -> dict:
        return self.model.run(feeds, backend=self.backend, max_iterations=self.max_iterations)

    def _run_batch(self, items: list, batch_size: int) -> dict[int, dict]:
        filled = items + [items[-1]] * (batch_size - len(items))
        first = filled[0][1]
        joined = {}
        for name, x in first.items():
            if name in self.axes:
                joined[name] = np.concatenate([f[name] for _, f, _ in filled],
                                              axis=self.axes[name])
            else:
                joined[name] = x
        outs = self._call(joined)
        self.batches_run += 1
        total = sum(n for _, _, n in filled)
        result: dict[int, dict] = {i: {} for i, _, _ in items}
        for name, value in outs.items():
            state = self.verdict.outputs.get(name)
            if not isinstance(state, Batched):
                for i in result:
                    result[i][name] = value if value is None or isinstance(value, list) \
                        else np.array(value)
                continue
            if not isinstance(value, np.ndarray) or value.shape[state.axis] != total:
                raise ExecutionError(f"run_many: output '{name}' has shape "
                                     f"{getattr(value, 'shape', None)}, expected {total} "
                                     f"examples on axis {state.axis} (internal error)")
            start = 0
            for i, _, n in items:
                result[i][name] = np.take(value, np.arange(start, start + n), axis=state.axis)
                start += n
        return result

    def _call(self, joined: dict) -> dict:
        if self.placer is None:
            return self.model.run(joined, backend=self.backend,
                                  max_iterations=self.max_iterations)
        placed = {name: self.placer.put(x, self.axes.get(name)) for name, x in joined.items()}
        return self.model.jax_compiled().run(placed, max_iterations=self.max_iterations)
