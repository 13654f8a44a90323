"""``itergraph.onnx_backend``: the ONNX backend API (prepare / run / run_model / run_node)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from onnx import helper as h

import itergraph.onnx_backend as backend
from itergraph import InputError, UnsupportedError
from onnx_builders import const, model, run_ort, vi

F = TensorProto.FLOAT


def _model():
    nodes = [h.make_node("Add", ["a", "w"], ["s"]), h.make_node("Mul", ["s", "b"], ["p"])]
    g = h.make_graph(nodes, "g", [vi("a", F, [2]), vi("w", F, [2]), vi("b", F, [2])],
                     [vi("p", F, [2]), vi("s", F, [2])],
                     [const("w", [10.0, 20.0], np.float32)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7)


def test_prepare_and_run_positional_dict_and_named_outputs():
    m = _model()
    a = np.array([1.0, 2.0], np.float32)
    b = np.array([3.0, 4.0], np.float32)
    rep = backend.prepare(m, "CPU")
    assert rep.input_names == ["a", "b"]  # the initializer 'w' is not a positional input
    want = run_ort(m, {"a": a, "b": b})
    for outs in (rep.run([a, b]), rep.run((a, b)), rep.run({"a": a, "b": b})):
        assert len(outs) == 2
        np.testing.assert_allclose(outs[0], want["p"])
        np.testing.assert_allclose(outs["s"], want["s"])
    np.testing.assert_allclose(backend.run_model(m, [a, b])[0], want["p"])


def test_run_node_builds_a_one_node_model():
    node = h.make_node("Gemm", ["x", "y"], ["z"], transB=1, alpha=0.5)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(12, dtype=np.float32).reshape(4, 3)
    (z,) = backend.run_node(node, [x, y])
    np.testing.assert_allclose(z, 0.5 * x @ y.T)


def test_devices_and_bad_inputs():
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    with pytest.raises(UnsupportedError):
        backend.prepare(_model(), "CUDA")
    rep = backend.prepare(_model())
    with pytest.raises(InputError):
        rep.run([np.zeros(2, np.float32)] * 3)
    with pytest.raises(InputError):
        rep.run([np.zeros(2, np.float32)])  # 'b' missing


def test_sequences_and_optionals_come_back_as_lists_and_none():
    nodes = [h.make_node("SplitToSequence", ["x"], ["seq"], axis=0, keepdims=0),
             h.make_node("Optional", [], ["none"],
                         type=h.make_tensor_type_proto(F, [2]))]
    seq_t = h.make_sequence_type_proto(h.make_tensor_type_proto(F, [2]))
    opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(F, [2]))
    m = model(nodes, [vi("x", F, [3, 2])],
              [h.make_value_info("seq", seq_t), h.make_value_info("none", opt_t)], opset=18)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    seq, none = backend.prepare(m).run([x])
    assert isinstance(seq, list) and len(seq) == 3
    np.testing.assert_array_equal(seq[1], x[1])
    assert none is None


def test_public_name_itergraph_backend_still_works():
    import itergraph.backend as public

    for name in public.__all__:
        assert getattr(public, name) is getattr(backend, name)
    assert set(public.__all__) == set(backend.__all__)
    out = public.run_model(_model(), [np.ones(2, np.float32), np.ones(2, np.float32)])
    np.testing.assert_allclose(out["p"], [11.0, 21.0])
