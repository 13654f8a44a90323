"""The writer on loops that OpenVINO's own API does not produce: TensorRT-style networks and
hand-built canonical loops. OpenVINO runs the written files; the oracle is a plain loop (the
network cases' own oracles, or NumPy here) and itergraph's NumPy run of the same graph."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from ov_helpers import assert_close, run_ov

from itergraph.backends.numpy import run_graph
from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read, write
from itergraph.ir import Carried, Concat, Graph, Last, Loop, Node, Sliced, Value, tensor

sys.path.insert(0, str(Path(__file__).parent.parent / "network"))
from net_cases import CASES  # noqa: E402

# OpenVINO 2026.4's CPU plugin computes `acc += row_of_y * other` wrongly in a loop body (it
# returns [1.5, 3.5] for this case's first row, not [0, 4]; the same model built with
# OpenVINO's own Python API gives the same wrong answer). itergraph's reading of the written
# file is checked instead.
OPENVINO_WRONG = {"nested_through_capture"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_network_case_written_to_openvino(tmp_path, name):
    net, feeds, want = CASES[name]()
    g = net.to_graph()
    xml = tmp_path / "net.xml"
    write(g, xml)
    again = list(run_graph(read(xml), feeds).values())
    for i, (a, b) in enumerate(zip(again, want.values())):
        assert_close(a, b, what=f"itergraph on the written IR, output {i}")
    got = run_ov(xml, feeds)
    assert len(got) == len(want)
    if name in OPENVINO_WRONG:  # still wrong: when OpenVINO is fixed, move the case back
        assert any(not np.allclose(a, b, rtol=1e-5, atol=1e-5)
                   for a, b in zip(got, want.values()))
        return
    for i, (a, b) in enumerate(zip(got, want.values())):
        assert_close(a, b, what=f"OpenVINO on the written IR, output {i}")


def _v(name, dtype="float32", shape=None):
    return Value(name, tensor(dtype, shape))


def _loop_graph(ports_fn, x_shape, trip=None, reverse_out=False, new_axis=True, axis=0):
    """out_k = piece_k * 2 (+ carried sum); returns (graph, loop)."""
    x = _v("x", shape=x_shape)
    inputs = [x]
    trip_v = None
    if trip is not None:
        trip_v = _v("trip", "int64", ())
        inputs.append(trip_v)
    body = Graph("body")
    param, sliced = ports_fn(x, body)
    two = Value("two", tensor("float32", ()), const=np.array(2, np.float32))
    body.initializers.append(two)
    y = _v("y", shape=None)
    body.add(Node("Mul", [param, two], [y], version=17, name="mul"))
    acc = _v("acc")
    acc2 = _v("acc2")
    body.inputs.append(acc)
    s = _v("s", shape=())
    body.add(Node("ReduceSum", [y], [s], {"keepdims": 0}, version=13, name="sum"))
    body.add(Node("Add", [acc, s], [acc2], version=17, name="add"))
    body.outputs = [y, acc2]
    acc0 = Value("acc0", tensor("float32", ()), const=np.array(0, np.float32))
    out_y, out_acc = _v("ys"), _v("total", shape=())
    y.type = tensor("float32", param.type.shape)
    loop = Loop(body, [sliced, Carried(acc0, acc, acc2)],
                [Concat(y, out_y, axis=axis, reverse=reverse_out, new_axis=new_axis),
                 Last(acc2, out_acc)], trip_count=trip_v, name="L")
    g = Graph("g", inputs, [out_y, out_acc], [loop], [acc0], opset_imports={"": 17})
    return g, loop


def _sliced(axis, start, end, stride, part, keep):
    def fn(x, body):
        shape = list(x.type.shape)
        if keep:
            shape[axis] = part
        else:
            del shape[axis]
        p = _v("piece", shape=tuple(shape))
        body.inputs.append(p)
        return p, Sliced(x, p, axis=axis, start=start, end=end, stride=stride, part_size=part,
                         keep_axis=keep)
    return fn


CANONICAL = {
    # (sliced spec, x shape, trip, reverse output, new_axis output, output axis)
    "scan_axis1_reverse": ((1, 0, -1, -1, 1, False), (2, 5), None, True, True, 1),
    "partial_range": ((1, 1, -1, 1, 1, True), (2, 6), None, False, False, 1),
    "partial_range_backwards": ((0, -2, 0, -1, 1, True), (5, 3), None, False, False, 0),
    "loop5_pairs_backwards": ((1, -1, 0, -2, 2, True), (3, 8), 3, True, False, 1),
    "loop5_pairs_forward_trip_beyond": ((0, 0, -1, 2, 2, True), (6, 2), 9, False, False, 0),
    "loop5_scan_reverse_concat": ((0, 0, -1, 1, 1, False), (4, 3), 3, True, True, 1),
}


def _oracle(x, spec, trip, reverse_out, new_axis, axis):
    s = Sliced(None, None, *spec)
    dim = x.shape[spec[0]]
    n = s.count(dim) if trip is None else min(trip, s.count(dim))
    ys, total = [], np.float32(0)
    for k in range(n):
        st = s.piece_start(k, dim)
        piece = np.take(x, range(st, st + s.part_size), axis=s.axis)
        if not s.keep_axis:
            piece = np.squeeze(piece, s.axis)
        y = piece * 2
        ys.append(y)
        total = total + y.sum()
    if reverse_out:
        ys = ys[::-1]
    out = np.stack(ys, axis) if new_axis else np.concatenate(ys, axis)
    return [out, np.asarray(total, np.float32)]


@pytest.mark.parametrize("name", sorted(CANONICAL))
def test_canonical_loop_written_to_openvino(tmp_path, name):
    spec, shape, trip, rev, new_axis, axis = CANONICAL[name]
    g, loop = _loop_graph(_sliced(*spec), shape, trip, rev, new_axis, axis)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    feeds = {"x": x} if trip is None else {"x": x, "trip": np.array(trip, np.int64)}
    want = _oracle(x, spec, trip, rev, new_axis, axis)
    ours = list(run_graph(g, feeds).values())
    for a, b in zip(ours, want):
        assert_close(a, b, what="NumPy backend vs the plain loop")
    xml = tmp_path / "c.xml"
    write(g, xml)
    text = xml.read_text()
    assert ('type="TensorIterator"' in text) == (trip is None)
    for i, (a, b) in enumerate(zip(run_ov(xml, feeds), want)):
        assert_close(a, b, rtol=1e-5, atol=1e-5, what=f"OpenVINO output {i}")


def test_precondition_on_a_sliced_input_is_refused(tmp_path):
    g, loop = _loop_graph(_sliced(0, 0, -1, 1, 1, False), (4, 3), 5)
    flag = _v("flag", "bool", ())
    zero = Value("zero", tensor("float32", ()), const=np.array(0, np.float32))
    loop.body.initializers.append(zero)
    first = loop.body.inputs[0]
    m = _v("m", shape=())
    loop.body.nodes.insert(0, Node("ReduceMax", [first], [m], {"keepdims": 0}, version=13))
    loop.body.nodes.insert(1, Node("Greater", [m, zero], [flag], version=13))
    loop.precondition = flag
    with pytest.raises(UnsupportedError, match="precondition.*sliced input 'piece'"):
        write(g, tmp_path / "p.xml")


def test_unwritable_op_names_the_node(tmp_path):
    x = _v("x", shape=(2,))
    y = _v("y", shape=(2,))
    g = Graph("g", [x], [y], [Node("StringNormalizer", [x], [y], version=10, name="sn")])
    with pytest.raises(UnsupportedError, match="StringNormalizer node 'sn'"):
        write(g, tmp_path / "u.xml")


def test_last_port_of_an_outer_value(tmp_path):
    """A Last port whose result is a value of the enclosing graph (not a body value) becomes a
    body input passed through to the Result."""
    x, y = _v("x", shape=(4, 3)), _v("y", shape=(2,))
    body = Graph("body")
    piece, acc, acc2 = _v("piece", shape=(1, 3)), _v("acc", shape=(1, 3)), _v("acc2", shape=(1, 3))
    body.inputs = [piece, acc]
    body.add(Node("Add", [acc, piece], [acc2], version=17, name="add"))
    body.outputs = [acc2]
    acc0 = Value("acc0", tensor("float32", (1, 3)), const=np.zeros((1, 3), np.float32))
    total, y_out = _v("total", shape=(1, 3)), _v("y_out", shape=(2,))
    loop = Loop(body, [Sliced(x, piece, axis=0, keep_axis=True), Carried(acc0, acc, acc2)],
                [Last(acc2, total), Last(y, y_out)], name="L")
    g = Graph("g", [x, y], [total, y_out], [loop], [acc0], opset_imports={"": 17})
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(4, 3),
             "y": np.array([5, 7], np.float32)}
    want = [feeds["x"].sum(0, keepdims=True), feeds["y"]]
    for i, (a, b) in enumerate(zip(run_graph(g, feeds).values(), want)):
        assert_close(a, b, what=f"itergraph output {i}")
    xml = tmp_path / "m.xml"
    write(g, xml)
    for i, (a, b) in enumerate(zip(run_ov(xml, feeds), want)):
        assert_close(a, b, what=f"OpenVINO on the written IR, output {i}")
