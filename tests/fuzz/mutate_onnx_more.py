"""More ONNX mutation operators, registered in `mutate_onnx.OPS`: FLOAT and STRING attributes,
the values (not the bytes) of initializers and Constants, model-local functions (a node moved
into one, then perhaps given the wrong arity, made recursive or left undefined), sparse
initializers, external data references, sequence, optional and map types where tensors are
declared, string tensors, the opset imports, nodes nested in an ``If``, and a Cast put between
a value and its reader (element types that disagree between nodes).

Each operator edits the model in place with the given `numpy.random.Generator` and returns a
description of what it did; `NotApplicable` when the model has nothing of its kind.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh

from .common import INTS, NotApplicable, pick
from .mutate_onnx import OPS, _label, _loop_biased_node, _tensors, graphs, nodes

FLOATS = (float("nan"), float("inf"), float("-inf"), -0.0, 0.0, -1.0, 1e-38, 1e38, 3.4e38,
          2.0**24 + 1)
# values of one STRING attribute that are valid for another op, and nonsense
STRINGS = ("", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge",
           "wrap", "nearest", "linear", "cubic", "half_pixel", "align_corners", "asymmetric",
           "tf_crop_and_resize", "round_prefer_floor", "floor", "ceil", "forward", "reverse",
           "bidirectional", "Tanh", "Relu", "Sigmoid", "DCR", "CRD", "none", "mean", "sum",
           "bilinear", "zeros", "border", "reflection", "\x00", "x" * 300)
FUNCTION_DOMAIN = "fuzz.functions"


# -- attributes ----------------------------------------------------------------------------------

@OPS.register("attr_float")
def attr_float(m, rng):
    """A FLOAT attribute (alpha, epsilon, clip, value) or an element of a FLOATS one (scales,
    activation_alpha) set to NaN, an infinity, -0, 0, a negative, a tiny or a huge value."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute
             if a.type == AttributeProto.FLOAT or (a.type == AttributeProto.FLOATS and a.floats)]
    n, a = pick(rng, cands)
    value = float(pick(rng, FLOATS))
    if a.type == AttributeProto.FLOAT:
        old, a.f = a.f, value
    else:
        old = list(a.floats)
        a.floats[int(rng.integers(len(a.floats)))] = value
    return f"{_label(n)}.{a.name}: {old} -> {value}"


@OPS.register("attr_string")
def attr_string(m, rng):
    """A STRING attribute (auto_pad, mode, direction, coordinate_transformation_mode...) set to
    a value another op accepts, the empty string, NUL or a long string."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute if a.type == AttributeProto.STRING]
    cands += [(n, a) for _, n in nodes(m) for a in n.attribute
              if a.type == AttributeProto.STRINGS and a.strings]
    n, a = pick(rng, cands)
    value = pick(rng, STRINGS).encode()
    if a.type == AttributeProto.STRING:
        old, a.s = a.s, value
    else:
        old = list(a.strings)
        a.strings[int(rng.integers(len(a.strings)))] = value
    return f"{_label(n)}.{a.name}: {old!r} -> {value!r}"


# -- tensor values -------------------------------------------------------------------------------

def _extreme(arr: np.ndarray, rng) -> np.ndarray:
    """`arr` with some values set to an extreme of its kind (same dtype and shape)."""
    out = arr.copy()
    flat = out.reshape(-1)
    idx = rng.integers(0, flat.size, max(1, flat.size // int(pick(rng, [1, 1, 2, 10]))))
    if arr.dtype.kind == "f":
        flat[idx] = pick(rng, [np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30])
    elif arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        value = int(pick(rng, [v for v in INTS if info.min <= v <= info.max]
                         + [int(flat[idx[0]]) + 1, int(flat[idx[0]]) - 1]))
        flat[idx] = np.array(value).astype(arr.dtype) if info.min <= value <= info.max else 0
    elif arr.dtype.kind == "b":
        flat[idx] = ~flat[idx]
    else:
        raise NotApplicable(f"values of {arr.dtype}")
    return out


@OPS.register("tensor_values")
def tensor_values(m, rng):
    """Some values of an initializer or Constant (weights, shapes, axes, indices, trip
    counts) set to NaN, an infinity, -0 or an extreme integer; its type and shape kept."""
    what, t = pick(rng, [(w, t) for w, t in _tensors(m)
                         if t.data_location != TensorProto.EXTERNAL and t.data_type not in
                         (TensorProto.STRING, TensorProto.UNDEFINED)])
    try:
        arr = nh.to_array(t)
    except Exception as e:  # noqa: BLE001 - a tensor onnx cannot read has no values to change
        raise NotApplicable(f"unreadable tensor: {e}") from None
    if arr.size == 0 or arr.dtype == object:
        raise NotApplicable("no values")
    new = _extreme(arr, rng)
    t.CopyFrom(nh.from_array(new, t.name))
    return f"{what} values {arr.reshape(-1)[:4].tolist()} -> {new.reshape(-1)[:4].tolist()}"


@OPS.register("string_tensor")
def string_tensor(m, rng):
    """An initializer or Constant replaced by a string tensor of its shape."""
    what, t = pick(rng, [(w, t) for w, t in _tensors(m) if t.data_type != TensorProto.STRING])
    dims = list(t.dims)
    n = int(np.prod(dims)) if dims else 1
    if n > 4096:
        raise NotApplicable("a large tensor")
    arr = np.array([pick(rng, ["1", "nan", "", "\xff"]) for _ in range(n)], object)
    t.CopyFrom(nh.from_array(arr.reshape(dims), t.name))
    return f"{what} made a string tensor"


@OPS.register("sparse_initializer")
def sparse_initializer(m, rng):
    """An initializer moved into ``sparse_initializer`` (its nonzero values and their flat
    indices), or so moved with indices out of range, negative, unsorted or duplicated, or
    values and indices of different lengths."""
    g, _ = pick(rng, [x for x in graphs(m.graph) if len(x[0].initializer)])
    t = pick(rng, [t for t in g.initializer if t.data_location != TensorProto.EXTERNAL
                   and t.data_type != TensorProto.STRING])
    arr = nh.to_array(t)
    if arr.size > 1 << 16:
        raise NotApplicable("a large initializer")
    flat = arr.reshape(-1)
    idx = np.flatnonzero(flat).astype(np.int64)
    vals = flat[idx]
    how = pick(rng, ["valid", "valid", "beyond", "negative", "unsorted", "duplicate",
                     "lengths", "dims"])
    if how == "beyond":
        idx = np.append(idx, arr.size + int(pick(rng, [0, 1, 2**40])))
        vals = np.append(vals, flat[:1] if flat.size else np.zeros(1, flat.dtype))
    elif how == "negative" and idx.size:
        idx[0] = -1
    elif how == "unsorted" and idx.size > 1:
        idx = idx[::-1].copy()
    elif how == "duplicate" and idx.size:
        idx, vals = np.append(idx, idx[0]), np.append(vals, vals[:1])
    elif how == "lengths" and idx.size:
        idx = idx[:-1]
    sp = onnx.SparseTensorProto()
    sp.values.CopyFrom(nh.from_array(vals.astype(arr.dtype), t.name))
    sp.indices.CopyFrom(nh.from_array(idx, t.name + "_indices"))
    dims = list(arr.shape) if how != "dims" else list(arr.shape)[1:] + [2**31]
    sp.dims.extend(dims)
    g.initializer.remove(t)
    g.sparse_initializer.append(sp)
    return f"initializer '{t.name}' made sparse ({how}, {idx.size} of {arr.size})"


@OPS.register("external_data")
def external_data(m, rng):
    """An initializer's data made a reference to an external file: one that does not exist,
    outside the model's folder, absolute, the model file itself (its bytes as the tensor's),
    or at an offset or length past a file's end."""
    g, _ = pick(rng, [x for x in graphs(m.graph) if len(x[0].initializer)])
    t = pick(rng, list(g.initializer))
    location = pick(rng, ["missing.bin", "../outside.bin", "/etc/passwd", "m.onnx", "m.onnx",
                          "sub/../m.onnx", "", ".", "\x00.bin"])
    entries = {"location": location}
    how = pick(rng, ["plain", "offset", "length", "negative", "huge"])
    if how == "offset":
        entries["offset"] = str(int(pick(rng, [1, 3, 4096, 10**9])))
    elif how == "length":
        entries["length"] = str(int(pick(rng, [0, 1, 4, 10**12])))
    elif how == "negative":
        entries[pick(rng, ["offset", "length"])] = "-8"
    elif how == "huge":
        entries["length"] = str(2**63 - 1)
    for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
              "uint64_data", "string_data"):
        t.ClearField(f)
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in entries.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    return f"initializer '{t.name}' external: {entries}"


# -- declared types ------------------------------------------------------------------------------

@OPS.register("value_kind")
def value_kind(m, rng):
    """A declared tensor type (graph or body input, output, value_info) made a sequence, an
    optional, a map or a sparse tensor of it, or left without any type."""
    vis = [(p, k, v) for g, p in graphs(m.graph) for k in ("input", "output", "value_info")
           for v in getattr(g, k) if v.type.HasField("tensor_type")]
    path, kind, v = pick(rng, vis)
    tt = onnx.TypeProto()
    tt.CopyFrom(v.type)
    how = pick(rng, ["sequence", "optional", "optional_sequence", "map", "sparse", "none"])
    v.type.Clear()
    if how == "sequence":
        v.type.sequence_type.elem_type.CopyFrom(tt)
    elif how == "optional":
        v.type.optional_type.elem_type.CopyFrom(tt)
    elif how == "optional_sequence":
        v.type.optional_type.elem_type.sequence_type.elem_type.CopyFrom(tt)
    elif how == "map":
        v.type.map_type.key_type = TensorProto.INT64
        v.type.map_type.value_type.CopyFrom(tt)
    elif how == "sparse":
        v.type.sparse_tensor_type.elem_type = tt.tensor_type.elem_type
        if tt.tensor_type.HasField("shape"):
            v.type.sparse_tensor_type.shape.CopyFrom(tt.tensor_type.shape)
    return f"{path} {kind} '{v.name}' type made {how}"


@OPS.register("opset_import")
def opset_import(m, rng):
    """The opset imports: the default domain's entry duplicated (another version), removed,
    given domain ``ai.onnx``, an imported domain removed, or a domain of version 0 added."""
    how = pick(rng, ["duplicate", "remove", "ai.onnx", "remove_other", "zero", "unused"])
    default = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
    others = [o for o in m.opset_import if o.domain not in ("", "ai.onnx")]
    if how == "duplicate" and default:
        o = m.opset_import.add()
        o.domain, o.version = default[0].domain, int(pick(rng, [1, 7, 11, 13, 17, 21]))
    elif how == "remove" and default:
        m.opset_import.remove(default[0])
    elif how == "ai.onnx" and default:
        default[0].domain = "ai.onnx"
    elif how == "remove_other" and others:
        m.opset_import.remove(pick(rng, others))
    elif how == "zero":
        o = m.opset_import.add()
        o.domain, o.version = pick(rng, ["ai.onnx.ml", "com.microsoft", "fuzz.domain"]), 0
    elif how == "unused":
        o = m.opset_import.add()
        o.domain, o.version = "fuzz.domain", 1
    else:
        raise NotApplicable(f"cannot {how}")
    return f"opset_import {how}: {[(o.domain, o.version) for o in m.opset_import]}"


# -- structure: functions, nesting, casts --------------------------------------------------------

def _import(m, domain: str, version: int = 1) -> None:
    if not any(o.domain == domain for o in m.opset_import):
        m.opset_import.add().CopyFrom(h.make_opsetid(domain, version))


@OPS.register("local_function")
def local_function(m, rng):
    """A node moved into a model-local function and called, as is (the same model), or with
    the function given one formal input or output fewer or more, made to call itself, or
    called in a domain the model does not import, or a call of a function not defined."""
    g, n = _loop_biased_node(m, rng)
    if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in n.attribute):
        raise NotApplicable("a node with a subgraph")
    name = f"fuzz_fn_{len(m.functions)}"
    formal_in = [f"i{k}" if x else "" for k, x in enumerate(n.input)]
    formal_out = [f"o{k}" for k in range(len(n.output))]
    inner = onnx.NodeProto()
    inner.CopyFrom(n)
    del inner.input[:], inner.output[:]
    inner.input.extend(formal_in)
    inner.output.extend(formal_out)
    inner.name = "inner"
    how = pick(rng, ["same", "same", "fewer_in", "more_in", "fewer_out", "more_out",
                     "recursive", "unimported", "undefined"])
    fin, fout = [x for x in formal_in if x], list(formal_out)
    body = [inner]
    if how == "fewer_in" and fin:
        fin.pop()
    elif how == "more_in":
        fin.append("extra")
    elif how == "fewer_out" and fout:
        fout.pop()
    elif how == "more_out":
        fout.append("extra_out")
        body.append(h.make_node("Identity", [fout[0]], ["extra_out"], name="extra"))
    elif how == "recursive":
        body.append(h.make_node(name, fin, ["again"], domain=FUNCTION_DOMAIN, name="again"))
    opsets = [o for o in m.opset_import if o.domain in ("", "ai.onnx", n.domain)]
    fn = h.make_function(FUNCTION_DOMAIN, name, fin, fout, body,
                         [h.make_opsetid(o.domain, o.version) for o in opsets]
                         + [h.make_opsetid(FUNCTION_DOMAIN, 1)])
    if how != "undefined":
        m.functions.append(fn)
    if how != "unimported":
        _import(m, FUNCTION_DOMAIN)
    call = h.make_node(name, list(n.input), list(n.output), name=n.name, domain=FUNCTION_DOMAIN)
    g.node.insert(list(g.node).index(n), call)
    g.node.remove(n)
    return f"{_label(n)} moved into function {name} ({how})"


def _typed(m) -> dict:
    """Value name -> TypeProto, from ONNX's shape inference (empty when it fails)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(m)
    except Exception:  # noqa: BLE001 - a model inference fails on has no known types
        return {}
    out = {}
    for g, _ in graphs(inferred.graph):
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
                out[v.name] = v.type
    return out


def _branch(tag: str, body: list, outs, types) -> onnx.GraphProto:
    """A branch graph of `body` whose outputs are ``<out>_<tag>`` typed as `outs`."""
    return h.make_graph(body, f"fuzz_{tag}", [],
                        [h.make_value_info(f"{o}_{tag}", types[o]) for o in outs])


@OPS.register("nest_if")
def nest_if(m, rng):
    """A node of the main graph moved into both branches of an ``If`` (the same model), or
    into one branch with the other computing another type, or into an ``If`` nested in
    another, or with a condition that is a vector or a float."""
    types = _typed(m)
    cands = [n for n in m.graph.node if n.output and all(o in types for o in n.output if o)
             and all(o for o in n.output)]
    n = pick(rng, cands)
    how = pick(rng, ["same", "same", "same", "else_other_type", "cond_vector", "cond_float",
                     "nested"])

    def branch(tag, node):
        inner = onnx.NodeProto()
        inner.CopyFrom(node)
        inner.name = f"{node.name}_{tag}"
        del inner.output[:]
        inner.output.extend(f"{o}_{tag}" for o in node.output)
        return _branch(tag, [inner], node.output, types)

    then_b = branch("then", n)
    else_b = branch("else", n)
    if how == "else_other_type":  # output 0 a float64 constant, the others the node's
        inner = onnx.NodeProto()
        inner.CopyFrom(n)
        inner.name = f"{n.name}_else"
        del inner.output[:]
        inner.output.extend(f"{o}_raw" for o in n.output)
        body = [inner, h.make_node("Constant", [], [f"{n.output[0]}_else"], name="other",
                                   value=nh.from_array(np.array([1.5], np.float64)))]
        body += [h.make_node("Identity", [f"{o}_raw"], [f"{o}_else"], name=f"id{k}")
                 for k, o in enumerate(n.output) if k]
        else_b = _branch("else", body, n.output, types)
    elif how == "nested":
        inner_if = h.make_node("If", ["fuzz_cond"], [f"{o}_then" for o in n.output],
                               name=f"{n.name}_inner", then_branch=branch("then2", n),
                               else_branch=branch("else2", n))
        then_b = _branch("then", [inner_if], n.output, types)
    value = {"cond_vector": np.array([True, False]), "cond_float": np.array(1.0, np.float32)
             }.get(how, np.array(True))
    cond = h.make_node("Constant", [], ["fuzz_cond"], name="fuzz_cond",
                       value=nh.from_array(value))
    node = h.make_node("If", ["fuzz_cond"], list(n.output), name=f"{n.name}_if",
                       then_branch=then_b, else_branch=else_b)
    i = list(m.graph.node).index(n)
    m.graph.node.remove(n)
    m.graph.node.insert(i, node)
    m.graph.node.insert(i, cond)
    return f"{_label(n)} nested in an If ({how})"


@OPS.register("cast_between")
def cast_between(m, rng):
    """A Cast to another element type put between a value and one node reading it (an int64
    shape read as int32, a float read as float16 or as int64...)."""
    g, n = _loop_biased_node(m, rng)
    ins = [k for k, x in enumerate(n.input) if x]
    k = pick(rng, ins)
    to = int(pick(rng, [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE,
                        TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL,
                        TensorProto.UINT8, TensorProto.INT8]))
    name = f"fuzz_cast_{n.name or n.op_type}_{k}"
    g.node.insert(list(g.node).index(n), h.make_node("Cast", [n.input[k]], [name], to=to,
                                                     name=name))
    n.input[k] = name
    return f"{_label(n)} input {k} cast to {TensorProto.DataType.Name(to)}"
