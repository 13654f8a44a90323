"""Older forms of Reshape, TopK, Slice, Clip, Pad, Squeeze, Unsqueeze, Split and the
reductions are read into one form (`ir.canonical`): the moved attributes as constant inputs. The
oracle is ONNX Runtime on the file as written by its producer; the written file keeps the file's
opset where ONNX's version converter can bring the node back."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig
from itergraph.ir.canonical import FORMS, READ_AS, canonicalize, int_operand
from itergraph.ir.graph import Graph, Node, Value
from itergraph.ir.types import DataType, TensorType

F = T.FLOAT

CASES = {  # name: (opset, node, input shape)
    "slice_1": (9, h.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, 2], axes=[0, 1]),
                (4, 3)),
    "slice_1_no_axes": (9, h.make_node("Slice", ["x"], ["y"], starts=[-3], ends=[100]), (4, 3)),
    "clip_6": (6, h.make_node("Clip", ["x"], ["y"], min=-0.2, max=0.3), (4, 3)),
    "clip_6_max_only": (10, h.make_node("Clip", ["x"], ["y"], max=0.1), (4, 3)),
    "squeeze_11": (11, h.make_node("Squeeze", ["x"], ["y"], axes=[-2]), (4, 1, 3)),
    "squeeze_11_all": (11, h.make_node("Squeeze", ["x"], ["y"]), (1, 4, 1)),
    "squeeze_9": (9, h.make_node("Squeeze", ["x"], ["y"], axes=[1]), (4, 1, 3)),
    "unsqueeze_11": (11, h.make_node("Unsqueeze", ["x"], ["y"], axes=[0, -1]), (4, 3)),
    "reducesum_11": (11, h.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0), (4, 3)),
    "reducesum_11_all": (11, h.make_node("ReduceSum", ["x"], ["y"]), (4, 3)),
    "split_11": (11, h.make_node("Split", ["x"], ["y", "z"], axis=0, split=[1, 3]), (4, 3)),
    "split_11_equal": (11, h.make_node("Split", ["x"], ["y", "z"], axis=1), (4, 2)),
    "reshape_4": (4, h.make_node("Reshape", ["x"], ["y"], shape=[0, -1, 2]), (4, 3, 2)),
    "topk_9": (9, h.make_node("TopK", ["x"], ["y", "i"], k=2, axis=0), (4, 3)),
    "clip_1": (1, h.make_node("Clip", ["x"], ["y"], min=-0.5, consumed_inputs=[0]), (4, 3)),
    "pad_10": (10, h.make_node("Pad", ["x"], ["y"], pads=[1, 0, 0, 2], value=1.5), (4, 3)),
    "pad_2_reflect": (2, h.make_node("Pad", ["x"], ["y"], pads=[0, 2, 0, 1], mode="reflect"),
                      (4, 3)),
    "reducemax_13": (13, h.make_node("ReduceMax", ["x"], ["y"], axes=[-1], keepdims=0), (4, 3)),
    "reducemean_11_all": (11, h.make_node("ReduceMean", ["x"], ["y"]), (4, 3)),
    "reducel2_17": (17, h.make_node("ReduceL2", ["x"], ["y"], axes=[0]), (4, 3)),
    "reducelogsumexp_13": (13, h.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[0, 1],
                                           keepdims=0), (4, 3)),
    "reduceprod_1": (1, h.make_node("ReduceProd", ["x"], ["y"], axes=[1]), (4, 3)),
}


# ONNX Runtime runs no Clip-1: its oracle is the opset 6 node of the same meaning (the
# ``consumed_inputs`` hint of opsets before 6 changes no result)
ORACLE = {"clip_1": (6, h.make_node("Clip", ["x"], ["y"], min=-0.5))}


def _model(opset: int, node, shape) -> onnx.ModelProto:
    outs = [onnx.ValueInfoProto(name=o) for o in node.output]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", F, list(shape))], outs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _ort(m: onnx.ModelProto, feeds):
    return ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("name", sorted(CASES))
def test_older_form_is_read_as_the_newer_one_and_computes_the_same(name, tmp_path):
    opset, node, shape = CASES[name]
    m = _model(opset, node, shape)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = _ort(_model(*ORACLE[name], shape) if name in ORACLE else m, {"x": x})
    model = ig.load(m)
    (n,) = model.graph.nodes
    form = FORMS[n.op_type]
    assert n.version == form.since
    assert not any(mv.attr in n.attrs for mv in form.moved)
    for backend in ("numpy", "jax"):
        got = list(model.run({"x": x}, backend=backend).values())
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    path = tmp_path / "w.onnx"
    ig.save(model, path)
    written = onnx.load(path)
    back = form.back_to is not None and opset >= form.back_to
    assert written.opset_import[0].version == (opset if back else form.since)
    for g, w in zip(_ort(written, {"x": x}), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_read_version_is_kept_and_newer_forms_are_left_alone():
    m = _model(11, h.make_node("Squeeze", ["x"], ["y"], axes=[1]), (4, 1, 3))
    (n,) = ig.load(m).graph.nodes
    assert n.meta[READ_AS] == 11 and int_operand(n, 1) == [1]
    axes = onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")
    m13 = _model(13, h.make_node("Squeeze", ["x", "axes"], ["y"]), (4, 1, 3))
    m13.graph.initializer.append(axes)
    (n13,) = ig.load(m13).graph.nodes
    assert n13.version == 13 and READ_AS not in n13.meta and int_operand(n13, 1) == [1]


def test_clip_of_an_input_of_unknown_type_casts_its_bounds_like_it():
    """The bounds of a ``Clip``-6 take the input's element type, known here only at run time:
    float32 constants (the attributes' precision) cast like the input by a ``CastLike``."""
    x = Value("x", TensorType(None, None))
    clip = Node("Clip", [x], [Value("y")], {"min": -0.25, "max": 0.5}, version=6)
    g = Graph("g", [x], clip.outputs, [clip])
    assert canonicalize(g) == 1
    assert clip.version == 11 and clip.attrs == {}
    assert [n.op_type for n in g.nodes] == ["CastLike", "CastLike", "Clip"]
    assert all(v.producer.inputs[0].const.dtype == np.float32 for v in clip.inputs[1:])
    a = np.random.default_rng(1).standard_normal(12)
    model = ig.load(g)
    for dtype in (np.float64, np.float16):
        for backend in ("numpy", "jax"):
            got = model.run({"x": a.astype(dtype)}, backend=backend)["y"]
            assert got.dtype == dtype
            want = np.clip(a.astype(dtype), np.float32(-0.25).astype(dtype), dtype(0.5))
            np.testing.assert_array_equal(got, want)


def test_a_kernel_refuses_a_reduction_that_kept_its_axes_attribute():
    """A graph built by hand with an older form is refused, not reduced over every axis."""
    x = Value("x", TensorType(DataType.FLOAT32, (2, 3)))
    r = Node("ReduceMax", [x], [Value("y")], {"axes": [1]}, version=13, name="r")
    model = ig.load(Graph("g", [x], r.outputs, [r]))
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.Error, match="'axes' is an attribute"):
            model.run({"x": np.ones((2, 3), np.float32)}, backend=backend)
