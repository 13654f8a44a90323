"""Running one graph on one engine: itergraph's NumPy and JAX backends, ONNX Runtime and
OpenVINO (the file written in that runtime's format, in a temporary directory).

``run_on(engine, graph, feeds, source=None)`` returns ``{output name: value}`` in the graph's
output order. A peer that fails raises `PeerError` with the runtime's message; a peer that
is not installed raises `UnsupportedError`. `source` is the model's own file: a runtime whose
format it is runs that file itself rather than itergraph's rewrite of it.

A stateful graph (OpenVINO ``ReadValue``/``Assign``) runs one step reading `state`
(``{variable id: value}``; a variable not in it reads its init value) and returns the step
graph's outputs: the model's, then ``<variable id>/next`` (`inspect.state_step`). NumPy, JAX
and ONNX Runtime run the step graph, the state fed as inputs (ONNX has no state). OpenVINO
runs the model's own IR in a fresh ``InferRequest`` whose variables are given `state` with
``query_state()[i].state = Tensor`` before the call and read back after it: its state
machinery is what is checked. Nothing is stored anywhere: the caller's model keeps its state.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Error, UnsupportedError
from ..feeds import check_feeds
from ..ir.graph import Graph
from ..ir.state import has_state
from ..passes.state_io import StatePorts
from .state_step import one_step

ENGINES = ("numpy", "jax", "onnxruntime", "openvino")


class PeerError(Error):
    """A peer runtime (ONNX Runtime, OpenVINO) refused or failed on the written file."""


#: the package each engine needs besides itergraph's own
_PACKAGES = {"jax": "jax", "onnxruntime": "onnxruntime", "openvino": "openvino"}


def installed_engines() -> tuple[str, ...]:
    """The engines whose packages are installed (numpy always)."""
    import importlib.util

    return tuple(e for e in ENGINES
                 if e not in _PACKAGES or importlib.util.find_spec(_PACKAGES[e]) is not None)


def run_on(engine: str, graph: Graph, feeds: dict[str, Any], source: str | None = None,
           max_iterations: int | None = None, state: dict | None = None) -> dict[str, Any]:
    if engine not in ENGINES:
        from ..errors import InputError

        raise InputError(f"unknown engine '{engine}'; choose from {', '.join(ENGINES)}")
    feeds = check_feeds(graph, feeds)
    if has_state(graph):
        step, step_feeds, ports = one_step(graph, feeds, state)
        if engine == "openvino":
            names = [v.name for v in step.outputs]
            return dict(zip(names, _run_openvino(graph, feeds, source, state or {}, ports)))
        graph, feeds, source = step, step_feeds, None
    if engine == "numpy":
        from ..backends.numpy import run_graph

        return run_graph(graph, feeds, max_iterations=max_iterations)
    if engine == "jax":
        from ..backends import jax as jax_backend

        if not jax_backend.available():
            raise UnsupportedError("engine 'jax' needs the jax package")
        return jax_backend.run_graph(graph, feeds, max_iterations=max_iterations)
    names = [v.name for v in graph.outputs]
    if engine == "onnxruntime":
        return dict(zip(names, _run_ort(graph, feeds, source)))
    return dict(zip(names, _run_openvino(graph, feeds, source)))


def _inputs(graph: Graph, feeds: dict) -> dict:
    return {v.name: feeds[v.name] for v in graph.inputs if v.const is None and v.name in feeds}


def _run_ort(graph: Graph, feeds: dict, source: str | None) -> list:
    try:
        import onnxruntime as ort
    except ImportError:
        raise UnsupportedError("engine 'onnxruntime' needs the onnxruntime package (pip install "
                               "onnxruntime, or itergraph[peers])") from None
    if source is not None and Path(source).suffix.lower() == ".onnx":
        data = Path(source).read_bytes()
    else:
        from ..frontends.onnx import write

        data = write(graph).SerializeToString()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        s = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        by_name = dict(zip([o.name for o in s.get_outputs()],
                           s.run(None, _inputs(graph, feeds))))
    except Exception as e:  # noqa: BLE001 - any failure of the peer is reported as such
        raise PeerError(f"onnxruntime failed: {type(e).__name__}: {e}") from None
    return [by_name[v.name] for v in graph.outputs]


def _run_openvino(graph: Graph, feeds: dict, source: str | None, state: dict | None = None,
                  ports: StatePorts | None = None) -> list:
    try:
        import openvino as ov
    except ImportError:
        raise UnsupportedError("engine 'openvino' needs the openvino package (pip install "
                               "openvino, or itergraph[peers])") from None
    with tempfile.TemporaryDirectory(prefix="itergraph-") as tmp:
        if source is not None and Path(source).suffix.lower() == ".xml":
            xml = Path(source)
        else:
            from ..frontends.openvino import write

            xml = Path(tmp) / "model.xml"
            write(graph, xml)
        try:
            core = ov.Core()
            c = core.compile_model(core.read_model(str(xml)), "CPU",
                                   {"INFERENCE_PRECISION_HINT": "f32"})
            if ports is None:
                r = c(_inputs(graph, feeds))
                return [np.asarray(r[o]) for o in c.outputs]
            request = c.create_infer_request()
            given = {var.name: var for var in request.query_state()}
            for vid, value in state.items():  # a variable OpenVINO lacks fails in the lookup
                given[vid].state = ov.Tensor(np.ascontiguousarray(value))
            r = request.infer(_inputs(graph, feeds))
            outs = [np.array(r[o]) for o in c.outputs]
            after = {var.name: np.array(var.state.data) for var in request.query_state()}
            return outs + [after[vid] for vid in ports.outputs]
        except Exception as e:  # noqa: BLE001 - any failure of the peer is reported as such
            raise PeerError(f"openvino failed: {type(e).__name__}: {e}") from None
