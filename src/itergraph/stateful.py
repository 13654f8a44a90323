"""Variable state kept across runs of a model, as OpenVINO's ``InferRequest`` keeps it.

`State` holds the value of each assigned variable (`ir.state`). A run executes the pure
step graph of `passes.state_io.step_graph` (state in, next state out) on the chosen backend,
then stores the next values: a ``ReadValue`` sees the value the run started with, and an
``Assign`` takes effect for the next run. Until a variable is assigned (or after
`reset`), its ``ReadValue`` gives the init value, or zeros of the variable's type. The step
graph depends only on which variables hold a value, so one compiled variant serves each
such set (usually two: the first run, and every later one).

A run that fails stores nothing. A variable with no ``Assign`` never holds a value: it reads
its init value on every run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import ExecutionError, InputError, where
from .ir.graph import Graph
from .ir.state import Variable, variables
from .ir.types import TensorType
from .passes.state_io import StatePorts, step_graph


class State:
    """The variables of one model and the values they hold; `make_model(graph)` builds the
    runnable model of a step graph (the caller's `Model` class)."""

    def __init__(self, graph: Graph, make_model: Callable[[Graph], Any]):
        self.graph = graph
        self.table: dict[str, Variable] = variables(graph)
        self.values: dict[str, np.ndarray] = {}
        self._make_model = make_model
        self._variants: dict[frozenset[str], tuple[Any, StatePorts]] = {}
        self._lock = threading.Lock()

    def run(self, feeds: dict[str, Any], backend: str, **options) -> dict[str, Any]:
        """Run one step with `feeds` (the model's own inputs); returns the model's outputs
        and keeps the assigned values."""
        held = dict(self.values)
        model, ports = self._variant(frozenset(held))
        step_feeds = dict(feeds)
        for vid, value in held.items():
            step_feeds[ports.inputs[vid]] = value
        outs = model.run(step_feeds, backend=backend, **options)
        nxt = {}
        for vid, name in ports.outputs.items():
            nxt[vid] = self._checked(vid, outs.pop(name))
        self.values.update(nxt)
        return outs

    def reset(self, variable_id: str | None = None) -> None:
        """Forget the value of one variable (default: all): it reads its init value again."""
        if variable_id is None:
            self.values.clear()
        else:
            self._variable(variable_id)
            self.values.pop(variable_id, None)

    def query(self) -> dict[str, np.ndarray]:
        """``{variable id: value}`` for the variables that hold a value (copies)."""
        return {vid: np.array(v) for vid, v in self.values.items()}

    def set(self, values: dict[str, Any]) -> None:
        """Give variables values, as if assigned by a previous run (checked against their
        declared element type and dims: `InputError`)."""
        checked = {}
        for vid, value in values.items():
            var = self._variable(vid)
            arr = np.asarray(value)
            problem = _misfit(var.type, arr)
            if problem:
                raise InputError(f"variable '{vid}': {problem}")
            checked[vid] = np.array(arr)
        self.values.update(checked)

    def _variable(self, vid: str) -> Variable:
        var = self.table.get(vid)
        if var is None:
            raise InputError(f"the model has no variable '{vid}' (variables: "
                             f"{sorted(self.table)})")
        return var

    def _checked(self, vid: str, value: Any) -> np.ndarray:
        arr = np.asarray(value)
        problem = _misfit(self.table[vid].type, arr)
        if problem:
            raise ExecutionError(f"{where(self.table[vid].assign)}: the value assigned to "
                                 f"variable '{vid}' {problem}")
        return arr

    def _variant(self, held: frozenset[str]):
        variant = self._variants.get(held)
        if variant is None:
            with self._lock:
                variant = self._variants.get(held)
                if variant is None:
                    step, ports = step_graph(self.graph, held)
                    variant = self._variants[held] = (self._make_model(step), ports)
        return variant


def _misfit(t: TensorType, arr: np.ndarray) -> str:
    """Why `arr` cannot be the value of a variable of type `t` ('' when it can)."""
    if t.dtype is not None and arr.dtype != t.dtype.numpy:
        return f"has element type {arr.dtype}, the variable holds {t.dtype}"
    if t.shape is not None:
        if arr.ndim != len(t.shape) or any(isinstance(d, int) and d != n
                                           for d, n in zip(t.shape, arr.shape)):
            dims = ",".join(str(d) if isinstance(d, int) else "?" for d in t.shape)
            return f"has shape {arr.shape}, the variable's shape is [{dims}]"
    return ""
