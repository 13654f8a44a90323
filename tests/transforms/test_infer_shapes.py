"""`infer-shapes`: static shapes and element types of every value through loops, checked
against the shapes OpenVINO and ONNX's own inference give, and against the run; written into
ONNX value_info and OpenVINO port dims without changing any output."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xf_models import (
    FLAVOURS,
    I64,
    F,
    as_file,
    assert_runs_the_same,
    loops_of,
    onnx_loop,
    onnx_loop_feeds,
    onnx_scan,
    onnx_scan_feeds,
    vi,
)

import itergraph as ig
from itergraph.ir import TensorType
from itergraph.transforms import optimize


def _strip(model: ig.Model) -> dict[int, object]:
    """Forget the type of every node output at any depth; the types it had, by uid."""
    had = {}
    for _, n in model.graph.walk():
        for v in n.outputs:
            had[v.uid] = v.type
            v.type = None
    return had


def _static(t) -> bool:
    return isinstance(t, TensorType) and t.shape is not None and all(
        isinstance(d, int) for d in t.shape)


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_types_found_again_after_forgetting_them(flavour, tmp_path):
    """Every node output whose type the file stated statically (OpenVINO: its own shape
    inference wrote the port dims) gets that type back; loop outputs get static shapes."""
    build, feeds_of = FLAVOURS[flavour]
    path = as_file(build(), tmp_path, "in")
    model = ig.load(path)
    _strip(model)
    out = optimize(model, ["infer-shapes"])
    compared = 0
    for (_, a), (_, b) in zip(ig.load(path).graph.walk(), out.graph.walk(), strict=True):
        for va, vb in zip(a.outputs, b.outputs, strict=True):
            if _static(va.type):
                assert vb.type == va.type, (flavour, b, va.type, vb.type)
                compared += 1
    assert compared >= 4
    got = out.run(feeds_of())
    for v in out.graph.outputs:  # and the run agrees with the static shapes
        assert _static(v.type) and tuple(v.type.shape) == got[v.name].shape
    for loop in loops_of(out):
        assert all(_static(p.output.type) for p in loop.output_ports)
    assert_runs_the_same(ig.load(path), out, feeds_of(), tmp_path)


def _loop_without_types() -> onnx.ModelProto:
    """The ONNX Loop model with every shape in its body and outputs left out."""
    m = onnx_loop()
    body = m.graph.node[3].attribute[0].g
    for vi_ in [*body.output, *m.graph.output]:
        vi_.type.tensor_type.ClearField("shape")
    return m


def test_agrees_with_onnx_shape_inference_and_writes_value_info(tmp_path):
    m = _loop_without_types()
    model = ig.load(m)
    out = optimize(model, ["infer-shapes"])
    path = tmp_path / "typed.onnx"
    ig.save(out, path)
    written = onnx.load(path)
    body = next(n for n in written.graph.node if n.op_type == "Loop").attribute[0].g
    infos = {vi_.name: vi_ for vi_ in body.value_info}
    assert "xi" in infos  # Gather(x, i): neither a body input nor output
    for vi_ in body.value_info:  # body intermediates are declared with static shapes
        dims = vi_.type.tensor_type.shape.dim
        assert all(d.HasField("dim_value") for d in dims), vi_
    y = next(o for o in written.graph.output if o.name == "y")
    assert [d.dim_value for d in y.type.tensor_type.shape.dim] == [5, 3]
    # ONNX's own inference over the original file: where it knows a dim, we know the same
    ref = onnx.shape_inference.infer_shapes(m, strict_mode=False)
    ref_body = ref.graph.node[3].attribute[0].g
    ours = {v.name: v.type for g, n in out.graph.walk() for v in n.outputs}
    checked = 0
    for vi_ in ref_body.value_info:
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in vi_.type.tensor_type.shape.dim]
        if vi_.name in ours and dims and None not in dims:
            assert list(ours[vi_.name].shape) == dims, vi_.name
            checked += 1
    assert checked >= 1
    assert_runs_the_same(model, out, onnx_loop_feeds(), tmp_path)
    back = ig.load(_written_xml(out, tmp_path))  # OpenVINO port dims carry the shapes
    assert all(_static(v.type) for v in back.graph.outputs)


def _written_xml(model, tmp_path):
    path = tmp_path / "typed.xml"
    ig.save(model, path)
    return path


def _growing_state() -> onnx.ModelProto:
    """c = Concat(c, x) for 3 steps: the carried value's first dim changes every step."""
    body = helper.make_graph(
        [helper.make_node("Concat", ["c", "x"], ["c_out"], axis=0),
         helper.make_node("ReduceSum", ["c_out"], ["s"], keepdims=0),
         helper.make_node("Identity", ["cond"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond", TensorProto.BOOL, []), vi("c", F, None)],
        [vi("cond_out", TensorProto.BOOL, []), vi("c_out", F, None), vi("s", F, None)])
    g = helper.make_graph(
        [helper.make_node("Loop", ["three", "", "c0"], ["c_final", "sums"], body=body)], "g",
        [vi("c0", F, [1, 2]), vi("x", F, [1, 2])], [vi("c_final", F, None), vi("sums", F, None)],
        [onnx.numpy_helper.from_array(np.int64(3), "three")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_carried_dim_that_changes_becomes_unknown(tmp_path):
    model = ig.load(_growing_state())
    out = optimize(model, ["infer-shapes"])
    loop = loops_of(out)[0]
    assert loop.carried[0].param.type.shape == (None, 2)
    assert out.graph.outputs[0].type.shape == (None, 2)
    assert out.graph.outputs[1].type.shape == (3,)  # static count of scalar sums
    feeds = {"c0": np.ones((1, 2), np.float32), "x": np.full((1, 2), 2, np.float32)}
    assert out.run(feeds)["c_final"].shape == (4, 2)
    assert_runs_the_same(model, out, feeds, tmp_path)


@pytest.mark.parametrize("flavour", ["onnx.Loop", "onnx.Scan"])
def test_symbolic_length_carries_over_to_scan_outputs(flavour, tmp_path):
    """x is ['n', 3]: the count is Gather(Shape(x), 0) (Loop) or x's whole axis (Scan), so
    the stacked output is ['n', 3] even where the file declares no shape for it."""
    build = onnx_loop if flavour == "onnx.Loop" else onnx_scan
    m = build(n="n")
    for vi_ in m.graph.output:
        vi_.type.tensor_type.ClearField("shape")
    model = ig.load(m)
    out = optimize(model, ["infer-shapes"])
    y = next(v for v in out.graph.outputs if v.name in ("y", "out"))
    assert y.type.shape == ("n", 3)
    feeds = (onnx_loop_feeds if flavour == "onnx.Loop" else onnx_scan_feeds)(4)
    assert_runs_the_same(model, out, feeds, tmp_path)
