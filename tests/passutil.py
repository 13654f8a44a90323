"""Helpers for the pass tests: apply a pass to a copy, run both graphs, find loops."""

from __future__ import annotations

import numpy as np

import itergraph as ig
from itergraph.backends.numpy import CompileContext, run_plan
from itergraph.ir import Graph, Loop, verify
from itergraph.ir.clone import clone_graph


def load(m) -> Graph:
    return ig.load(m).graph


def transformed(graph: Graph, pass_fn) -> tuple[Graph, int]:
    """`pass_fn` applied to a copy of `graph` (which stays as it was); the copy is verified."""
    g = clone_graph(graph)
    count = pass_fn(g)
    verify(g)
    return g, count


def run(graph: Graph, feeds: dict) -> dict:
    """Run on the NumPy backend exactly as the graph says (no backend rewrites)."""
    return run_plan(CompileContext(optimize=False).compile(graph), feeds)


def assert_same_outputs(a: Graph, b: Graph, feeds: dict, exact: bool = False) -> None:
    got, want = run(b, feeds), run(a, feeds)
    assert list(got) == list(want)
    for k in want:
        g, w = np.asarray(got[k]), np.asarray(want[k])
        assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, w.shape, g.dtype, w.dtype)
        if exact:
            np.testing.assert_array_equal(g, w, err_msg=k)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=k)


def loops(graph: Graph) -> list[Loop]:
    return [n for _, n in graph.walk() if isinstance(n, Loop)]


def ops(graph: Graph) -> list[str]:
    """Op types of `graph`'s own nodes (not of its subgraphs)."""
    return [n.op_type for n in graph.nodes]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def assert_like_ort_everywhere(m, feeds: dict, tmp_path, rtol=1e-5, atol=1e-6) -> None:
    """ONNX model `m` gives ONNX Runtime's outputs (shapes included) on both backends and,
    written as IR by itergraph, in OpenVINO's CPU plugin."""
    import openvino as ov

    from onnx_builders import run_ort

    want = run_ort(m, feeds)
    for backend in ("numpy", "jax"):
        got = ig.load(m).run(feeds, backend=backend)
        for k in want:
            assert np.asarray(got[k]).shape == want[k].shape, (backend, k)
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol,
                                       err_msg=f"{backend} {k}")
    xml = tmp_path / "m.xml"
    ig.save(ig.load(m), xml)
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feeds)
    for out, name in zip(compiled.outputs, want):
        assert result[out].shape == want[name].shape, ("openvino", name)
        np.testing.assert_allclose(result[out], want[name], rtol=rtol, atol=atol,
                                   err_msg=f"openvino {name}")
