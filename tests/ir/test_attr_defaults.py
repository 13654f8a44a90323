"""Attribute defaults (`ir.defaults`): ONNX's schemas, and ONNX Runtime's for the contrib ops
that share a standard op's kernel. A node that leaves its attributes out computes what ONNX
Runtime computes on both backends; one that leaves out a required one is refused by name; and
no kernel, lowering or writer of standard ops writes a schema's default again."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

from itergraph.errors import ModelError
from itergraph.frontends.onnx.attributes import attr_from_onnx
from itergraph.ir.attributes import attr_or_default
from itergraph.ir.defaults import CONTRIB
from itergraph.ir.graph import Node
from onnx_builders import F, assert_same, run_ig, run_ort, vi


def test_contrib_defaults_are_onnx_runtime_s():
    schemas = {(s.domain, s.name): s for s in get_all_operator_schema()}
    for (domain, op), table in CONTRIB.items():
        attrs = schemas[(domain, op)].attributes
        for name, value in table.items():
            # ONNX Runtime's binding gives the default as a serialised AttributeProto
            want = attr_from_onnx(onnx.AttributeProto.FromString(
                attrs[name]._default_value), lambda g: None)
            assert value == want, (op, name, value, want)


def _all_defaults_model() -> onnx.ModelProto:
    """One node of each op whose attributes are all left out (but required ones)."""
    ms = "com.microsoft"
    nodes = [
        h.make_node("LeakyRelu", ["x"], ["leaky"]),
        h.make_node("Elu", ["x"], ["elu"]),
        h.make_node("Selu", ["x"], ["selu"]),
        h.make_node("HardSigmoid", ["x"], ["hsig"]),
        h.make_node("Softmax", ["x"], ["softmax"]),
        h.make_node("Gemm", ["x", "w", "c"], ["gemm"]),
        h.make_node("FusedGemm", ["x", "w", "c"], ["fgemm"], domain=ms, activation="Relu"),
        h.make_node("ReduceMean", ["x"], ["mean"]),
        h.make_node("ArgMax", ["x"], ["argmax"]),
        h.make_node("CumSum", ["x", "zero"], ["cumsum"]),
        h.make_node("LayerNormalization", ["x", "s"], ["ln"]),
        h.make_node("Flatten", ["x"], ["flat"]),
    ]
    outs = [vi(n.output[0], onnx.TensorProto.INT64 if n.op_type == "ArgMax" else F)
            for n in nodes]
    g = h.make_graph(nodes, "defaults", [vi("x", F, [3, 4]), vi("w", F, [4, 4]),
                                         vi("c", F, [4]), vi("s", F, [4])], outs,
                     [onnx.numpy_helper.from_array(np.array(0, np.int64), "zero")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21), h.make_opsetid(ms, 1)],
                        ir_version=10)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_left_out_attributes_compute_what_onnx_runtime_computes(backend):
    m = _all_defaults_model()
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((3, 4), np.float32),
             "w": rng.standard_normal((4, 4), np.float32),
             "c": rng.standard_normal(4).astype(np.float32),
             "s": rng.standard_normal(4).astype(np.float32)}
    assert_same(run_ig(m, feeds, backend=backend), run_ort(m, feeds), rtol=1e-5, atol=1e-5)


def test_a_left_out_required_attribute_is_refused_by_name():
    with pytest.raises(ModelError, match=r"Concat node 'join'.*'axis' is required"):
        attr_or_default(Node("Concat", name="join"), "axis")



# -- no default spelled again -------------------------------------------------------------

_REGISTRARS = {"kernel", "lowering", "exporter", "importer"}
_SRC = Path(__file__).resolve().parents[2] / "src" / "itergraph"
# where a registered function runs a standard ONNX node (OpenVINO's importers read its ops)
_SCOPES = ("backends", "frontends/openvino/ops", "tensorrt/onnxparser")


def _registered(call: ast.AST) -> list[str] | None:
    """The ops a ``@kernel("Op", ...)``-like call registers ([] for another domain's); None
    for any other call."""
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) in _REGISTRARS):
        return None
    if any(k.arg == "domain" for k in call.keywords):
        return []
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


@cache
def _standard_schemas() -> dict[str, list]:
    out: dict[str, list] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "":
            out.setdefault(s.name, []).append(s)
    return out


@cache
def _schema_defaults(op: str, name: str) -> tuple:
    """`name`'s default in every version of `op` (an attribute the op gained later counts with
    its first default, as `ir.defaults` reads it; None where there is none)."""
    schemas = _standard_schemas().get(op, [])
    newest = max(schemas, key=lambda s: s.since_version, default=None)
    out = []
    for s in schemas:
        a = s.attributes[name] if name in s.attributes else newest.attributes.get(name)
        out.append(attr_from_onnx(a.default_value, lambda g: None)
                   if a is not None and a.default_value.name else None)
    return tuple(out)


def _same(default, value) -> bool:
    if isinstance(value, float) and isinstance(default, float):
        return np.float32(default) == np.float32(value)
    return default == value


def _literal(call: ast.Call) -> tuple[str, object] | None:
    """(attribute, literal default) of ``attr(node, "x", literal)`` or
    ``node.attrs.get("x", literal)``."""
    f, args = call.func, call.args
    if isinstance(f, ast.Attribute) and f.attr == "get" and len(args) == 2 and \
            ast.unparse(f.value).endswith("attrs"):
        key, lit = args
    elif getattr(f, "id", None) == "attr" and len(args) == 3:
        key, lit = args[1:]
    else:
        return None
    try:
        value = ast.literal_eval(lit)
    except ValueError:
        return None
    if not isinstance(key, ast.Constant) or isinstance(value, (list, tuple)):
        return None
    return key.value, value


def _top_level_calls(tree: ast.Module):
    """The calls of the module's top-level statements and loops (not inside functions)."""
    todo = list(tree.body)
    while todo:
        st = todo.pop()
        if isinstance(st, (ast.For, ast.If)):
            todo.extend(st.body)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            yield st.value


def _literal_defaults() -> list[str]:
    """Literal defaults in functions registered only for standard ops whose schemas give
    the attribute that default in every version."""
    files = [p for s in _SCOPES for p in (_SRC / s).rglob("*.py")
             if not (s == "frontends/openvino/ops" and p.name.startswith("read"))]
    texts = {p: p.read_text() for p in files}
    trees = {p: ast.parse(t) for p, t in texts.items()
             if any(f"{r}(" in t for r in _REGISTRARS)}
    by_call: dict[str, list] = {}  # registered by a call: exporter("Scatter")(_scatter_elements)
    for tree in trees.values():
        for n in _top_level_calls(tree):
            if n.args and isinstance(n.args[0], ast.Name):
                ops = _registered(n.func)
                if ops is not None:
                    by_call.setdefault(n.args[0].id, []).append(ops)
    out = []
    for p, tree in trees.items():
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            regs = [r for r in map(_registered, fn.decorator_list) if r is not None]
            regs += by_call.get(fn.name, [])
            if not regs or not all(regs):
                continue
            for c in ast.walk(fn):
                found = _literal(c) if isinstance(c, ast.Call) else None
                if found is None:
                    continue
                defaults = [d for ops in regs for op in ops for d in _schema_defaults(op, found[0])]
                if defaults and all(_same(d, found[1]) for d in defaults):
                    out.append(f"{p.relative_to(_SRC)}:{c.lineno} {found[0]}={found[1]!r}")
    return out


def test_no_kernel_lowering_or_writer_spells_a_schema_default_again():
    assert _literal_defaults() == []
