"""Prepared models: `Model.compile` -> `Session`, the call path of a model called many times.

    sess = m.compile(backend="auto")      # chooses the engine, prepares it once
    outs = sess.run({"x": x})             # {output name: value}, as Model.run returns

As ONNX Runtime's ``InferenceSession`` and OpenVINO's ``CompiledModel``: everything that
depends only on the model and the options is done once — choosing the engine, the NumPy
plan or the JAX program, the checks of the options — and a call pays for the feeds' check
(remembered per signature of host arrays, `feeds.FeedCheck`) and the run itself. Once a
signature has passed the check and its engine has a call for it (`Session.run`: NumPy's
plan; on JAX a run that is one XLA program, called directly, `backends.jax.fast_call`; on
"auto" the engine it judged faster), feeds of that signature go straight to that call.
`Model.run` keeps one session per (backend, max_iterations) and runs through it.

The engine ``"auto"`` chooses (`choose_backend`): JAX when the whole graph compiles with XLA
and it holds work worth a compiled program (a loop, an If, a recurrent or convolution op,
ONNX Runtime's generation operators, or more than `AUTO_NODES` nodes); else NumPy, whose
call costs a few microseconds per node where JAX's dispatch alone costs tens. Where JAX can
run it, "auto" never makes a call wait for a compile and keeps, per input signature, the
engine measured faster on it (`tiered.TieredRunner`). The default engine is ``"auto"``;
the environment variable ``ITERGRAPH_BACKEND`` (``numpy``, ``jax`` or ``auto``) changes it.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

from .backends.common import progress
from .errors import InputError, UnsupportedError
from .feeds import FeedCheck
from .ir import Loop
from .ir.state import has_state
from .semantics import generation

BACKENDS = ("numpy", "jax", "auto")
ENV_BACKEND = "ITERGRAPH_BACKEND"
AUTO_NODES = 24
#: Ops whose work a compiled program does far faster than a NumPy kernel per call (ONNX
#: Runtime's generation operators: a loop over the tokens, 10x faster compiled).
COMPILED_WORK = frozenset({"If", "Loop", "Scan", "LSTM", "GRU", "RNN", "Conv",
                           "ConvTranspose", "RecurrentSequence", *generation.OPS})


def check_max_iterations(value: Any) -> int | None:
    """`value` as the bound on every loop: ``None`` (no bound) or an integer in
    ``[0, 2**63 - 1]``; anything else is the caller's error (`InputError`)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"max_iterations must be a non-negative integer or None, got "
                         f"{value!r} ({type(value).__name__})")
    value = int(value)
    if not 0 <= value <= 2**63 - 1:
        raise InputError(f"max_iterations must lie between 0 and 2**63 - 1, got {value}")
    return value


def default_backend() -> str:
    """The engine used when none is named: ``$ITERGRAPH_BACKEND``, else ``"auto"``."""
    name = os.environ.get(ENV_BACKEND, "").strip().lower() or "auto"
    if name not in BACKENDS:
        raise InputError(f"{ENV_BACKEND}={name!r} names no backend; choose one of {BACKENDS}")
    return name


def backend_name(backend: str | None) -> str:
    """`backend` checked (None: `default_backend`)."""
    if backend is None:
        return default_backend()
    if backend not in BACKENDS:
        raise InputError(f"unknown backend '{backend}'; choose one of {BACKENDS}")
    return backend


def choose_backend(model, backend: str | None) -> str:
    """The engine that runs `model` for `backend` (None: `default_backend`)."""
    backend = backend_name(backend)
    if backend == "numpy":
        return "numpy"
    from .backends import jax as jax_backend

    if not jax_backend.available():
        if backend == "jax":
            raise UnsupportedError("backend 'jax' needs the jax package "
                                   "(pip install itergraph[jax])")
        return "numpy"
    if backend == "auto" and not (worth_compiling(model.graph)
                                  and model.jax_compiled().fully_compiled):
        return "numpy"
    return "jax"


def worth_compiling(graph) -> bool:
    """Does `graph` hold work a compiled program does faster than NumPy (see module doc)?"""
    count = 0
    for _, node in graph.walk():
        if isinstance(node, Loop) or node.op_type in COMPILED_WORK:
            return True
        if node.op_type != "Constant":
            count += 1
    return count > AUTO_NODES


class JaxCall:
    """A session's call on the JAX engine: `CompiledGraph.run` on checked feeds; `direct`
    gives the session a signature's prepared call (`backends.jax.fast_call`) once its run
    is one compiled program. Only signatures the graph's run does not plan per value (no
    promoted input, `backends.jax.planner`) are kept: their prepared call computes any
    values of those shapes (padded ones, `backends.jax.padded_calls`, included). A prepared
    call that declines (a run-time error flagged, out of memory) hands over to the full
    path, which raises the model's own error."""

    def __init__(self, cg, max_iterations: int | None):
        self.cg, self.max_iterations = cg, max_iterations

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any]:
        return self.cg.run(feeds, max_iterations=self.max_iterations)

    def direct(self, feeds: dict[str, Any]):
        """The prepared call of the signature of `feeds` (checked host arrays, just run);
        None: not yet; False: none will be."""
        cg = self.cg
        if cg.promoted_names():
            return False
        sig = cg.signature(feeds, self.max_iterations)
        if sig is None:
            return False
        fast = cg.prepared_call(sig)
        if fast:
            return fast
        return False if cg.compiled_for(sig) else None


class NumpyCall:
    """A session's call on the NumPy engine: its plan, run on checked feeds."""

    def __init__(self, plan):
        from .backends.numpy import run_plan

        self.run = functools.partial(run_plan, plan)

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any]:
        return self.run(feeds)

    def direct(self, feeds: dict[str, Any]):
        return self.run


class Session:
    """`model` prepared for one engine and iteration limit; ``run(feeds)`` -> outputs."""

    #: feed signatures whose engine call is kept (`run`)
    MAX_DIRECT = 256

    def __init__(self, model, backend: str | None = None, max_iterations: int | None = None):
        self.model = model
        self.max_iterations = check_max_iterations(max_iterations)
        self._check = FeedCheck(model.graph)
        # FeedCheck.key -> the engine's call for feeds of that signature, or None (none)
        self._direct: dict[tuple, Any] = {}
        if has_state(model.graph):  # the step graph (state in, state out) chooses its own
            self.backend = backend_name(backend)
            self._call = self._stateful
            return
        self.backend = choose_backend(model, backend)  # the engine that runs: numpy or jax
        if self.backend == "jax" and backend_name(backend) == "auto":
            from .tiered import TieredRunner

            numpy = NumpyCall(model.numpy_plan(self.max_iterations, False))
            self._call = TieredRunner(model.jax_compiled(), numpy.run, self.max_iterations)
        elif self.backend == "jax":
            self._call = JaxCall(model.jax_compiled(), self.max_iterations)
        else:
            self._call = NumpyCall(model.numpy_plan(self.max_iterations, False))

    @property
    def inputs(self) -> list:
        return self.model.inputs

    @property
    def outputs(self) -> list:
        return self.model.outputs

    def run(self, feeds: dict[str, Any]) -> dict[str, Any]:
        """Run on `feeds` (``{input name: value}``); ``{output name: value}`` in output order.

        Feeds of a signature (`FeedCheck.key`) that has passed the check as it is go straight
        to the call the engine gave for it (`_learn`): one signature built per call, no
        other dispatch. A call that declines (returns None) takes the full path."""
        key = FeedCheck.key(feeds)
        fn = self._direct.get(key, False)
        if fn and not progress.active():
            out = fn(feeds)
            if out is not None:
                return out
        out = self._call(self._check(feeds))
        if fn is False and key is not None:
            self._learn(feeds, key)
        return out

    def _learn(self, feeds: dict[str, Any], key: tuple) -> None:
        """Keep the engine's call for feeds of signature `key` (just run), once it has one
        (`direct`: the call, None not yet, False never): only for feeds the check took as
        they are (a conversion would be skipped)."""
        direct = getattr(self._call, "direct", None)
        if direct is None or not self._check.passed(key) or len(self._direct) >= self.MAX_DIRECT:
            return
        fn = direct(feeds)
        if fn is not None:
            self._direct[key] = fn or None

    def engine_for(self, feeds: dict[str, Any]) -> str | None:
        """The engine that runs feeds of this signature: ``"numpy"`` or ``"jax"``; None where
        ``"auto"`` has not judged it yet (it is answered on NumPy meanwhile)."""
        engine_for = getattr(self._call, "engine_for", None)
        return self.backend if engine_for is None else engine_for(feeds)

    def _stateful(self, feeds):
        return self.model.state.run(feeds, self.backend, max_iterations=self.max_iterations)

    def __repr__(self) -> str:
        return (f"Session({self.model.source or self.model.graph.name!r}, "
                f"backend={self.backend!r}, max_iterations={self.max_iterations})")
