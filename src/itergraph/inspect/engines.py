"""Running one graph on one engine: itergraph's NumPy and JAX backends, ONNX Runtime and
OpenVINO (the file written in that runtime's format, in a temporary directory).

``run_on(engine, graph, feeds, source=None)`` returns ``{output name: value}`` in the graph's
output order. A peer that fails raises `PeerError` with the runtime's message; a peer that
is not installed raises `UnsupportedError`. `source` is the model's own file: a runtime whose
format it is runs that file itself rather than itergraph's rewrite of it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Error, UnsupportedError
from ..feeds import check_feeds
from ..ir.graph import Graph

ENGINES = ("numpy", "jax", "onnxruntime", "openvino")


class PeerError(Error):
    """A peer runtime (ONNX Runtime, OpenVINO) refused or failed on the written file."""


def run_on(engine: str, graph: Graph, feeds: dict[str, Any], source: str | None = None,
           max_iterations: int | None = None) -> dict[str, Any]:
    if engine not in ENGINES:
        from ..errors import InputError

        raise InputError(f"unknown engine '{engine}'; choose from {', '.join(ENGINES)}")
    feeds = check_feeds(graph, feeds)
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
        raise UnsupportedError("engine 'onnxruntime' needs the onnxruntime package") from None
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


def _run_openvino(graph: Graph, feeds: dict, source: str | None) -> list:
    try:
        import openvino as ov
    except ImportError:
        raise UnsupportedError("engine 'openvino' needs the openvino package") from None
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
            r = c(_inputs(graph, feeds))
            return [np.asarray(r[o]) for o in c.outputs]
        except Exception as e:  # noqa: BLE001 - any failure of the peer is reported as such
            raise PeerError(f"openvino failed: {type(e).__name__}: {e}") from None
