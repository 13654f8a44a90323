"""Model-local functions: each call is expanded by the reader (`frontends/onnx/functions.py`).

Oracle: ONNX Runtime, which runs local functions itself, on the original model (NumPy where
ONNX Runtime refuses a valid model: a body at another opset than the model's, an output that
passes an input through); the imported graph runs on NumPy (and JAX where marked) and is
written back to ONNX (functions expanded) and run by ONNX Runtime again. The KNNImputer files
in data/ (skl2onnx 1.20, from the scikit-learn corpus of tests/realworld: nine functions
calling each other, some inside If branches) are checked against scikit-learn's own outputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnxfe_util import assert_same, ort_run, roundtrip, vi, written

import itergraph as ig
from itergraph.errors import ModelError
from itergraph.frontends.onnx import read
from itergraph.ir.canonical import READ_AS
from itergraph.ir.graph import Graph

DATA = Path(__file__).parent / "data"
F = TP.FLOAT


def fmodel(nodes, inputs, outputs, functions, opset=18, domains=("local",), ir_version=10):
    """A model calling `functions`; every domain in `domains` is imported at version 1."""
    g = h.make_graph(nodes, "main", inputs, outputs)
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains]
    m = h.make_model(g, opset_imports=ops, functions=functions)
    m.ir_version = ir_version
    return m


def fn(name, inputs, outputs, nodes, opset=18, domain="local", **kw):
    ops = [h.make_opsetid("", opset), h.make_opsetid(domain, 1)]
    return h.make_function(domain, name, inputs, outputs, nodes, ops, **kw)


def call(function, inputs, outputs, domain="local", **kw):
    return h.make_node(function, inputs, outputs, domain=domain, **kw)


def walk(g: Graph):
    for n in g.nodes:
        yield n
        for s in n.subgraphs():
            yield from walk(s)


def all_values(g: Graph):
    for n in walk(g):
        yield from n.outputs


def feeds(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return {f"x{i}" if len(shapes) > 1 else "x": rng.standard_normal(s).astype(np.float32)
            for i, s in enumerate(shapes)}


def check(m, fs, backends=("numpy",), want=None):
    """The imported graph, run on numpy (and jax) and written back to ONNX and run by ONNX
    Runtime, gives `want` (default: ONNX Runtime on `m`)."""
    want = ort_run(m, fs) if want is None else want
    g = read(m)
    assert_same(ort_run(written(g), fs), want)
    for backend in backends:
        out = ig.load(g).run(fs, backend=backend)
        assert_same([np.asarray(v) for v in out.values()], want)
    return g


# -- opsets -----------------------------------------------------------------------------------

def test_function_body_is_read_with_its_own_opset():
    """Model at opset 18 (ReduceSum axes as an input); the function imports opset 11
    (ReduceSum axes as an attribute, Squeeze axes as an attribute). ONNX Runtime reads such a
    body at the model's opset and refuses it: the oracle is NumPy."""
    f = fn("rowsum", ["a"], ["b"],
           [h.make_node("ReduceSum", ["a"], ["s"], axes=[1], keepdims=1),
            h.make_node("Squeeze", ["s"], ["b"], axes=[1])], opset=11)
    axes = h.make_tensor("axes", TP.INT64, [1], [0])
    m = fmodel([call("rowsum", ["x"], ["r"]),
                h.make_node("Constant", [], ["ax"], value=axes),
                h.make_node("ReduceSum", ["r", "ax"], ["y"], keepdims=0)],
               [vi("x", F, [3, 4])], [vi("y", F, [])], [f])
    fs = feeds((3, 4))
    g = check(m, fs, backends=("numpy", "jax"), want=[fs["x"].sum(axis=1).sum()])
    # read with opset 11, then given the canonical form (axes as an input, version 13)
    versions = {n.op_type + ("/f" if n.name.startswith("rowsum") else ""):
                (n.meta.get(READ_AS, n.version), n.version, "axes" in n.attrs) for n in g.nodes}
    assert versions == {"ReduceSum/f": (11, 13, False), "Squeeze/f": (11, 13, False),
                        "Constant": (18, 18, False), "ReduceSum": (18, 18, False)}


def test_function_without_an_opset_import_for_a_domain_it_uses_is_refused():
    """As by ONNX Runtime and the ONNX checker: the model's import does not stand in."""
    f = h.make_function("local", "double", ["a"], ["b"],
                        [h.make_node("Add", ["a", "a"], ["b"], name="add")],
                        [h.make_opsetid("local", 1)])
    m = fmodel([call("double", ["x"], ["y"])], [vi("x", F, [2])], [vi("y", F, [2])], [f])
    with pytest.raises(ModelError, match=r"'double'.*node 'add'.*domain '' is not imported by "
                                         "its function"):
        read(m)


# -- binding inputs and outputs ---------------------------------------------------------

def test_two_calls_of_one_function_get_their_own_values():
    f = fn("affine", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["t"]),
                                         h.make_node("Add", ["t", "b"], ["c"])])
    m = fmodel([call("affine", ["x0", "x1"], ["y0"]), call("affine", ["y0", "x1"], ["y1"]),
                call("affine", ["x1", "y1"], ["y"])],
               [vi("x0", F, [3]), vi("x1", F, [3])], [vi("y", F, [3])], [f])
    g = check(m, feeds((3,), (3,)), backends=("numpy", "jax"))
    assert len(g.nodes) == 6
    names = [v.name for v in all_values(g)]
    assert len(set(names)) == len(names), names
    assert len({n.name for n in g.nodes}) == 6


def test_call_may_omit_optional_inputs_and_outputs():
    """Clip's min and max are optional formal inputs; the calls leave out `hi` (an empty name)
    and `lo2` (fewer inputs) and the second output (an empty name; or fewer outputs, which
    ONNX Runtime refuses: its oracle is the call with the empty name)."""
    f = fn("clamp", ["a", "lo", "hi", "lo2"], ["c", "d"],
           [h.make_node("Clip", ["a", "lo", "hi"], ["c"]),
            h.make_node("Clip", ["a", "lo2"], ["d"])])
    lo = h.make_node("Constant", [], ["lo"], value=h.make_tensor("lo", F, [], [-0.25]))

    def m(outputs):
        return fmodel([lo, call("clamp", ["x", "lo", ""], outputs)],
                      [vi("x", F, [6])], [vi("y", F, [6])], [f])

    fs = feeds((6,))
    g = check(m(["y", ""]), fs)
    clips = [n for n in g.nodes if n.op_type == "Clip"]
    assert [[v is None for v in n.inputs] for n in clips] == [[False, False, True],
                                                              [False, True]]
    check(m(["y"]), fs, want=ort_run(m(["y", ""]), fs))


def test_output_that_passes_an_input_through_or_repeats_a_value():
    """Refused by ONNX Runtime; the oracle is NumPy."""
    f = fn("tee", ["a"], ["same", "sq", "sq2"], [h.make_node("Mul", ["a", "a"], ["sq"])])
    f.output[0], f.output[2] = "a", "sq"
    m = fmodel([call("tee", ["x"], ["p", "q", "r"]), h.make_node("Add", ["p", "q"], ["s"]),
                h.make_node("Sub", ["s", "r"], ["y"])],
               [vi("x", F, [4])], [vi("y", F, [4])], [f])
    fs = feeds((4,))
    g = check(m, fs, want=[fs["x"]])
    assert sorted(n.op_type for n in g.nodes) == ["Add", "Identity", "Identity", "Mul", "Sub"]


def test_function_outputs_are_graph_outputs():
    f = fn("split2", ["a"], ["l", "r"], [h.make_node("Split", ["a"], ["l", "r"], axis=0,
                                                     num_outputs=2)])
    m = fmodel([call("split2", ["x"], ["y", "z"])], [vi("x", F, [4])],
               [vi("y", F, [2]), vi("z", F, [2])], [f])
    g = check(m, feeds((4,)))
    assert [v.name for v in g.outputs] == ["y", "z"]


# -- attributes ---------------------------------------------------------------------------------

def _renamed_ref(attr, ref, kind):
    """Attribute `attr` of a body node that takes the function's attribute `ref`."""
    return onnx.AttributeProto(name=attr, ref_attr_name=ref, type=kind)


def test_attribute_references_take_the_calls_value_or_the_default():
    A = onnx.AttributeProto
    leaky = h.make_node("LeakyRelu", ["a"], ["t"])
    leaky.attribute.append(_renamed_ref("alpha", "slope", A.FLOAT))
    cat = h.make_node("Concat", ["t", "a"], ["b"])
    cat.attribute.append(_renamed_ref("axis", "ax", A.INT))
    f = fn("lr", ["a"], ["b"], [leaky, cat], attributes=["ax"])
    f.attribute_proto.append(h.make_attribute("slope", 0.5))
    m = fmodel([call("lr", ["x"], ["y0"], ax=0), call("lr", ["x"], ["y1"], ax=1, slope=0.125)],
               [vi("x", F, [2, 3])], [vi("y0", F, [4, 3]), vi("y1", F, [2, 6])], [f])
    g = check(m, {"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)})
    got = sorted((n.attrs["alpha"], n.attrs.get("axis")) for n in g.nodes if n.op_type in
                 ("LeakyRelu",))
    assert got == [(0.125, None), (0.5, None)]
    assert sorted(n.attrs["axis"] for n in g.nodes if n.op_type == "Concat") == [0, 1]


def test_attribute_reference_without_value_leaves_the_attribute_unset():
    A = onnx.AttributeProto
    leaky = h.make_node("LeakyRelu", ["a"], ["b"])
    leaky.attribute.append(_renamed_ref("alpha", "slope", A.FLOAT))
    f = fn("lr", ["a"], ["b"], [leaky], attributes=["slope"])
    m = fmodel([call("lr", ["x"], ["y"])], [vi("x", F, [3])], [vi("y", F, [3])], [f])
    g = check(m, {"x": np.array([-1, 0, 2], np.float32)})
    assert "alpha" not in g.nodes[0].attrs


def test_attribute_references_inside_an_if_branch_of_a_function():
    A = onnx.AttributeProto

    def branch(name, op):
        n = h.make_node(op, ["a"], [f"{name}_out"])
        n.attribute.append(_renamed_ref("alpha", "k", A.FLOAT))
        return h.make_graph([n], name, [], [vi(f"{name}_out", F, [3])])

    f = fn("pick", ["c", "a"], ["b"],
           [h.make_node("If", ["c"], ["b"], then_branch=branch("then", "LeakyRelu"),
                        else_branch=branch("else", "Elu"))], attributes=["k"])
    m = fmodel([call("pick", ["c", "x"], ["y"], k=0.25)],
               [vi("c", TP.BOOL, []), vi("x", F, [3])], [vi("y", F, [3])], [f])
    x = np.array([-2, -1, 3], np.float32)
    for c in (True, False):
        check(m, {"c": np.array(c), "x": x}, backends=("numpy", "jax"))


def test_a_call_inside_a_function_passes_on_the_functions_attribute():
    A = onnx.AttributeProto
    leaky = h.make_node("LeakyRelu", ["a"], ["b"])
    leaky.attribute.append(_renamed_ref("alpha", "slope", A.FLOAT))
    inner = fn("inner", ["a"], ["b"], [leaky], attributes=["slope"])
    pass_on = call("inner", ["a"], ["t"])
    pass_on.attribute.append(_renamed_ref("slope", "k", A.FLOAT))
    outer = fn("outer", ["a"], ["b"], [pass_on, h.make_node("Neg", ["t"], ["b"])],
               attributes=["k"])
    m = fmodel([call("outer", ["x"], ["y0"], k=0.5), call("outer", ["y0"], ["y"], k=0.25)],
               [vi("x", F, [4])], [vi("y", F, [4])], [outer, inner])
    g = check(m, {"x": np.array([-4, -1, 1, 4], np.float32)})
    assert sorted(n.attrs["alpha"] for n in g.nodes if n.op_type == "LeakyRelu") == [0.25, 0.5]


# -- nesting ------------------------------------------------------------------------------------

def _square_and_twice():
    sq = fn("square", ["a"], ["b"], [h.make_node("Mul", ["a", "a"], ["b"])], opset=13)
    tw = fn("twice_sq", ["a"], ["b"], [call("square", ["a"], ["s"]),
                                       call("square", ["s"], ["t"]),
                                       h.make_node("Add", ["t", "s"], ["b"])])
    return sq, tw


def test_functions_calling_functions():
    sq, tw = _square_and_twice()
    m = fmodel([call("twice_sq", ["x"], ["y0"]), call("square", ["y0"], ["y"])],
               [vi("x", F, [3])], [vi("y", F, [3])], [tw, sq])
    g = check(m, feeds((3,)), backends=("numpy", "jax"))
    assert sorted((n.op_type, n.version) for n in g.nodes) == [("Add", 18)] + [("Mul", 13)] * 3
    names = [v.name for v in all_values(g)]
    assert len(set(names)) == len(names), names


def test_calls_inside_if_branches_inside_a_function():
    sq, _ = _square_and_twice()
    then = h.make_graph([call("square", ["a"], ["t_out"])], "then", [], [vi("t_out", F, [3])])
    els = h.make_graph([h.make_node("Neg", ["a"], ["e_out"])], "else", [], [vi("e_out", F, [3])])
    f = fn("maybe_sq", ["c", "a"], ["b"],
           [h.make_node("If", ["c"], ["b"], then_branch=then, else_branch=els)])
    m = fmodel([call("maybe_sq", ["c", "x"], ["y0"]), call("maybe_sq", ["c", "y0"], ["y"])],
               [vi("c", TP.BOOL, []), vi("x", F, [3])], [vi("y", F, [3])], [f, sq])
    for c in (True, False):
        check(m, {"c": np.array(c), "x": np.array([1, -2, 3], np.float32)},
              backends=("numpy", "jax"))


def test_calls_inside_loop_and_scan_bodies_of_the_main_graph():
    sq, tw = _square_and_twice()
    body = h.make_graph([call("square", ["v"], ["s"]), h.make_node("Add", ["s", "v"], ["v_out"]),
                         h.make_node("Identity", ["cond"], ["cond_out"])], "body",
                        [vi("i", TP.INT64, []), vi("cond", TP.BOOL, []), vi("v", F, [2])],
                        [vi("cond_out", TP.BOOL, []), vi("v_out", F, [2])])
    scan_body = h.make_graph([call("twice_sq", ["e"], ["e2"]),
                              h.make_node("Add", ["acc", "e2"], ["acc_out"]),
                              h.make_node("Identity", ["e2"], ["e_out"])], "scan_body",
                             [vi("acc", F, [2]), vi("e", F, [2])],
                             [vi("acc_out", F, [2]), vi("e_out", F, [2])])
    m = fmodel([h.make_node("Loop", ["n", "", "x0"], ["v_last"], body=body),
                h.make_node("Scan", ["v_last", "xs"], ["acc", "es"], body=scan_body,
                            num_scan_inputs=1)],
               [vi("n", TP.INT64, []), vi("x0", F, [2]), vi("xs", F, [3, 2])],
               [vi("acc", F, [2]), vi("es", F, [3, 2])], [sq, tw])
    fs = {"n": np.array(3, np.int64), "x0": np.array([0.5, -0.25], np.float32),
          "xs": np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)}
    g = check(m, fs, backends=("numpy", "jax"))
    assert not [n for n in walk(g) if n.domain == "local"]


def test_overloads_are_told_apart():
    f1 = fn("act", ["a"], ["b"], [h.make_node("Relu", ["a"], ["b"])], overload="relu")
    f2 = fn("act", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])], overload="neg")
    f3 = fn("act", ["a"], ["b"], [h.make_node("Abs", ["a"], ["b"])])
    m = fmodel([call("act", ["x"], ["p"], overload="neg"), call("act", ["p"], ["q"]),
                call("act", ["x"], ["r"], overload="relu"), h.make_node("Sub", ["q", "r"], ["y"])],
               [vi("x", F, [4])], [vi("y", F, [4])], [f1, f2, f3])
    g = check(m, {"x": np.array([-2, -1, 1, 2], np.float32)})
    assert sorted(n.op_type for n in g.nodes) == ["Abs", "Neg", "Relu", "Sub"]


# -- refused ------------------------------------------------------------------------------------

def _unchecked(nodes, functions, inputs=None, outputs=None):
    g = h.make_graph(nodes, "main", inputs or [vi("x", F, [2])], outputs or [vi("y", F, [2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("local", 1)],
                     functions=functions)
    m.ir_version = 10
    return m


def test_recursion_is_refused():
    a = fn("ping", ["a"], ["b"], [call("pong", ["a"], ["b"])])
    b = fn("pong", ["a"], ["b"], [h.make_node("Neg", ["a"], ["t"]), call("ping", ["t"], ["b"])])
    with pytest.raises(ModelError, match=r"'ping'.*calls itself \(ping -> pong -> ping\)"):
        read(_unchecked([call("ping", ["x"], ["y"], name="first")], [a, b]))


def test_recursion_through_an_if_branch_is_refused():
    then = h.make_graph([call("rec", ["a"], ["t_out"])], "then", [], [vi("t_out", F, [2])])
    els = h.make_graph([h.make_node("Neg", ["a"], ["e_out"])], "else", [], [vi("e_out", F, [2])])
    f = fn("rec", ["a"], ["b"], [h.make_node("ReduceMin", ["a"], ["m"], keepdims=0),
                                 h.make_node("Cast", ["m"], ["c"], to=TP.BOOL),
                                 h.make_node("If", ["c"], ["b"], then_branch=then,
                                             else_branch=els)])
    with pytest.raises(ModelError, match="calls itself"):
        read(_unchecked([call("rec", ["x"], ["y"])], [f]))


def test_undefined_function_in_a_function_domain_is_refused():
    f = fn("known", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])])
    with pytest.raises(ModelError, match=r"'cal'.*'unknown'.*does not define.*'known'"):
        read(_unchecked([call("unknown", ["x"], ["y"], name="cal")], [f]))
    with pytest.raises(ModelError, match=r"'known' \(overload 'v2'\)"):
        read(_unchecked([call("known", ["x"], ["y"], overload="v2")], [f]))


def test_wrong_arity_is_refused():
    f = fn("neg", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])])
    with pytest.raises(ModelError, match=r"'c2'.*2 inputs.*at most 1 inputs"):
        read(_unchecked([call("neg", ["x", "x"], ["y"], name="c2")], [f]))
    with pytest.raises(ModelError, match=r"2 outputs.*at most 1 outputs"):
        read(_unchecked([call("neg", ["x"], ["y", "z"])], [f],
                        outputs=[vi("y", F, [2]), vi("z", F, [2])]))


def test_duplicate_function_and_undefined_output_are_refused():
    f = fn("neg", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])])
    with pytest.raises(ModelError, match="defines function 'neg' of domain 'local' twice"):
        read(_unchecked([call("neg", ["x"], ["y"])], [f, f]))
    g = fn("nothing", ["a"], ["b"], [h.make_node("Neg", ["a"], ["c"])])
    with pytest.raises(ModelError, match="never defines its output 'b'"):
        read(_unchecked([call("nothing", ["x"], ["y"])], [g]))


def test_body_cannot_see_the_callers_values():
    f = fn("peek", ["a"], ["b"], [h.make_node("Add", ["a", "z"], ["b"])])
    with pytest.raises(ModelError, match=r"function 'peek'.*input 1 'z' is not defined"):
        read(_unchecked([h.make_node("Neg", ["x"], ["z"]), call("peek", ["x"], ["y"])], [f]))


def test_attribute_reference_of_the_wrong_kind_is_refused():
    n = h.make_node("LeakyRelu", ["a"], ["b"])
    n.attribute.append(_renamed_ref("alpha", "k", onnx.AttributeProto.FLOAT))
    f = fn("lr", ["a"], ["b"], [n], attributes=["k"])
    with pytest.raises(ModelError, match="'alpha' refers to attribute 'k'.*INT, not FLOAT"):
        read(_unchecked([call("lr", ["x"], ["y"], k=2)], [f]))


# -- a real converter's functions ---------------------------------------------------------------

@pytest.mark.parametrize("opset", [18, 22])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_skl2onnx_knn_imputer(opset, backend):
    """KNNImputer by skl2onnx 1.20: the functions import opsets 14 to 18 whatever the model's
    opset, call each other, and call inside If branches; compared with scikit-learn's output."""
    import itergraph as ig

    path = DATA / f"knn_imputer_op{opset}.onnx"
    data = np.load(path.with_suffix(".npz"))
    m = ig.load(path)
    got = m.run({"X": data["in0"]}, backend=backend)
    np.testing.assert_allclose(np.asarray(got["variable"]), data["out0"], rtol=1e-4, atol=1e-5)
    if backend == "numpy":  # written back (functions expanded), run by ONNX Runtime
        _, m2 = roundtrip(onnx.load(path), [{"X": data["in0"]}])
        assert not m2.functions


def test_exponential_nesting_is_refused_before_expanding():
    """f0 calls f1 twice, ..., f39 is one node: 2**39 nodes once expanded."""
    fs = [fn(f"f{i}", ["a"], ["b"], [call(f"f{i + 1}", ["a"], ["t"]),
                                     call(f"f{i + 1}", ["t"], ["b"])]) for i in range(39)]
    fs.append(fn("f39", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])]))
    with pytest.raises(ModelError, match=r"'top'.*more than 1000000 nodes.*too large"):
        read(_unchecked([call("f0", ["x"], ["y"], name="top")], fs))
