"""Checking an ONNX node of the standard domain against its operator schema, as ONNX Runtime
does when it loads a model:

- the number of inputs and outputs lies in the schema's range (an empty name is an optional
  input left out: it counts), and no required input has an empty name;
- every attribute the schema declares has the declared kind (``axis`` an int, ``body`` a
  graph, ...), and the required ones are present; an int attribute that holds a boolean
  (``TopK``'s ``largest``, ``keepdims``, ``Gemm``'s ``transA``: `_BOOLEAN`) is 0 or 1; a
  Transpose's ``perm`` is a permutation; an ``axes`` attribute of Unsqueeze / Squeeze, and the
  ``axis`` of Gather, Concat, Split, ArgMax... (`_AXIS_WITHIN_RANK`), and a reduction's
  ``axes`` attribute, lie within the rank
  where the input's rank is known: declared, or as ONNX's inference carries it at load
  (`LOAD_RANK`: a Shape's vector, the rank a Slice or an element-wise op keeps); ONNX
  Runtime's shape inference refuses them at load, even in a loop body that never runs;
- every input whose type is known has a type its formal parameter allows at this opset
  (``Loop``'s ``M`` is ``tensor(int64)``; ``Loop``-13 carries no ``optional`` and no
  ``bfloat16``), and inputs bound to one type parameter (``Add``'s ``T``) share one type;
- ``If``: both branches have as many outputs as the node.

An attribute the schema does not declare is refused, as ONNX Runtime refuses it (names starting
with ``__`` excepted, as there). Ops without a schema are not checked (the backend reports
those), nor inputs of unknown type.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto

from ...errors import ModelError, UnsupportedError
from ...ir.graph import Value
from ...ir.traits import Trait, ops_with, traits
from ...ir.types import MapType, OptionalType, SequenceType, TensorType
from ...semantics.recurrent import DEFAULT_ACTIVATIONS, activation_count_error
from ...semantics.window import window_attribute_error
from .tree_attributes import check_tree_attributes
from .types import dtype_from_onnx, dtype_to_onnx, type_from_onnx

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _where(p: onnx.NodeProto) -> str:
    return f"{p.op_type} node '{p.name or '<unnamed>'}'"


def type_string(t) -> str | None:
    """The ONNX type string of an IR type (``tensor(float)``, ``seq(tensor(int64))``), or
    ``None`` when the type (or its element type) is unknown."""
    if isinstance(t, TensorType):
        if t.dtype is None:
            return None
        return f"tensor({TensorProto.DataType.Name(dtype_to_onnx(t.dtype)).lower()})"
    if isinstance(t, SequenceType | OptionalType):
        inner = type_string(t.elem)
        if inner is None:
            return None
        return f"{'seq' if isinstance(t, SequenceType) else 'optional'}({inner})"
    if isinstance(t, MapType):
        inner = type_string(t.value)
        if t.key is None or inner is None:
            return None
        key = TensorProto.DataType.Name(dtype_to_onnx(t.key)).lower()
        return f"map({key}, {inner})"
    return None


def check_node(p: onnx.NodeProto, version: int, inputs: list[Value | None],
               outputs: list[Value]) -> None:
    """Raise `ModelError` naming `p` where it breaks its schema at opset `version`.

    An output whose element type is unknown and whose formal type is a type parameter the
    inputs bind (``Add``'s ``C`` is ``T``) gets that element type, as do a Constant's (its
    value's) and a Cast's (its ``to``), so that a type error further on (in a loop body, or
    wherever ONNX shape inference gives up) is still seen."""
    if p.domain == "ai.onnx.ml":
        check_tree_attributes(p, _where(p))
        _check_ml_types(p, version, inputs, outputs)
        return
    if p.domain not in _DEFAULT_DOMAINS:
        return
    try:
        schema = onnx.defs.get_schema(p.op_type, version, "")
    except onnx.defs.SchemaError:
        return
    what = f"{_where(p)} ({p.op_type}-{schema.since_version})"
    _check_arity(p, schema, what)
    _check_attributes(p, schema, what)
    _check_axes(p, inputs, what)
    bound = _check_types(schema, inputs, what)
    if p.op_type == "If":
        _check_if(p, outputs)
    _fill_output_types(schema, bound, outputs, what)
    if p.op_type == "Constant":
        _fill_constant_type(p, outputs)
    if p.op_type == "Cast":
        _fill_cast_type(p, outputs, what)
    if p.op_type in _DTYPE_OPS:
        _fill_cast_type(p, outputs, what, "dtype")
    if p.op_type == "ConstantOfShape" and len(outputs) == 1:
        _fill_constant_of_shape_type(p, outputs[0])
    if len(outputs) == 1:
        _fill_output_rank(p, inputs, outputs[0])


def _check_ml_types(p: onnx.NodeProto, version: int, inputs: list[Value | None],
                    outputs: list[Value]) -> None:
    """An ``ai.onnx.ml`` node's input types against its schema (a ``Scaler`` of a bool
    tensor: ONNX Runtime refuses it at load), and the output types its schema fixes
    (``TreeEnsembleRegressor``'s float ``Y``) given to its outputs, so that the nodes reading
    them are checked too. Only types: arity and attributes are the importers'."""
    try:
        schema = onnx.defs.get_schema(p.op_type, version, "ai.onnx.ml")
    except onnx.defs.SchemaError:
        return
    what = f"{_where(p)} ({p.op_type}-{schema.since_version} of ai.onnx.ml)"
    bound = _check_types(schema, inputs, what)
    floats = _FLOAT_FEATURES_ONLY.get(p.op_type)
    x = type_string(inputs[0].type) if floats and inputs and inputs[0] is not None else None
    if x is not None and x not in floats:
        raise UnsupportedError(f"{what}: features of {x}: ONNX Runtime implements it for "
                               f"{' and '.join(floats)} only")
    _fill_output_types(schema, bound, outputs, what)
    if p.op_type == "LabelEncoder" and len(outputs) == 1:
        _fill_label_encoder_type(p, outputs[0], what, _LABEL_ENCODER_VALUES)
    if p.op_type in _CLASSIFIERS and outputs:
        _fill_label_encoder_type(p, outputs[0], what, _CLASS_LABELS)
    if p.op_type == "Scaler":
        _check_scaler(p, what)


def _check_scaler(p: onnx.NodeProto, what: str) -> None:
    """A Scaler's ``scale`` and ``offset``: both given, of one length (ONNX Runtime refuses
    others when it loads the node; `onnx.reference` broadcast them)."""
    given = {a.name: len(a.floats) for a in p.attribute if a.name in ("scale", "offset")}
    for name in ("scale", "offset"):
        if not given.get(name):
            raise ModelError(f"{what}: attribute '{name}' is missing or empty")
    if given["scale"] != given["offset"]:
        raise ModelError(f"{what}: 'scale' has {given['scale']} values but 'offset' has "
                         f"{given['offset']}")


# ai.onnx.ml ops whose schema allows integer features that ONNX Runtime does not implement
_FLOAT_FEATURES_ONLY = {"TreeEnsembleRegressor": ("tensor(float)", "tensor(double)")}

# a LabelEncoder's output element type, from the attribute that holds its values
_LABEL_ENCODER_VALUES = {"values_floats": TensorProto.FLOAT, "values_int64s": TensorProto.INT64,
                         "values_strings": TensorProto.STRING}


# a classifier's label (output 0) element type, from the attribute that holds its classes
_CLASSIFIERS = ("LinearClassifier", "SVMClassifier", "TreeEnsembleClassifier")
_CLASS_LABELS = {"classlabels_ints": TensorProto.INT64, "classlabels_int64s": TensorProto.INT64,
                 "classlabels_strings": TensorProto.STRING}


def _fill_label_encoder_type(p, out: Value, what: str, table: dict) -> None:
    """`out` given the element type the attribute of `table` that `p` has makes (a
    LabelEncoder's values, a classifier's class labels); a declaration of another type is a
    `ModelError`, as ONNX Runtime refuses it at load."""
    for a in p.attribute:
        code = table.get(a.name)
        if a.name == "values_tensor" and a.type == AttributeProto.TENSOR:
            code = a.t.data_type
        if code:
            try:
                dtype = dtype_from_onnx(code)
            except Exception:  # noqa: BLE001 - not an element type: the kernel names it
                return
            _fill_checked(out, dtype, None, f"{what}: output '{out.name}'",
                          f"its '{a.name}' makes")
            return


def _check_activation_count(op: str, given: dict, what: str) -> None:
    """A recurrent cell's ``activations`` list suits its directions (ONNX Runtime refuses it
    at load; NumPy refused it only in a loop body that runs, JAX not in one it never runs)."""
    acts, direction = given.get("activations"), given.get("direction")
    if acts is None or acts.type != AttributeProto.STRINGS:
        return
    dirs = 2 if direction is not None and direction.s == b"bidirectional" else 1
    why = activation_count_error(op, dirs, len(acts.strings))
    if why is not None:
        raise ModelError(f"{what}: attribute 'activations': {why}")


def allowed_types(op: str, version: int, index: int) -> set[str] | None:
    """The type strings input `index` of standard op `op` allows at opset `version`."""
    try:
        schema = onnx.defs.get_schema(op, version, "")
    except onnx.defs.SchemaError:
        return None
    formals = list(schema.inputs)
    formal = formals[min(index, len(formals) - 1)]
    constraints = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    return constraints.get(formal.type_str, {formal.type_str})


def _fill_output_types(schema, bound: dict, outputs: list[Value], what: str) -> None:
    constraints = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
    for formal, v in zip(schema.outputs, outputs):
        first = bound.get(formal.type_str)
        if first is None:
            # a formal of one possible tensor type (``Greater``'s ``T1``: ``tensor(bool)``)
            only = constraints.get(formal.type_str, [formal.type_str])
            dtype = _single_tensor_dtype(only[0]) if len(only) == 1 else None
            if dtype is not None:
                _check_declared(v, only[0], formal, what)
                _fill_dtype(v, dtype)
            elif all(t.startswith("tensor(") for t in only) and _declared_kind(v):
                raise ModelError(f"{what}: output '{v.name}' ('{formal.name}') is declared "
                                 f"{_declared_string(v)} but the node computes a tensor")
            continue
        if not isinstance(first[2], TensorType):
            continue
        _check_declared(v, first[0], formal, what)
        _fill_dtype(v, first[2].dtype)


def _check_declared(v: Value, ts: str, formal, what: str) -> None:
    """An output declared (graph output, value_info) of another element type than the one its
    type parameter binds (``ReduceMean`` of a uint32 tensor declared float) is refused, as
    ONNX Runtime refuses it; else the run would hand back a type the file does not declare."""
    declared = _declared_string(v)
    if declared is not None and declared != ts:
        raise ModelError(f"{what}: output '{v.name}' ('{formal.name}') is declared {declared} "
                         f"but the node computes {ts}")


def _declared_string(v: Value) -> str | None:
    """The type string `v` is declared with where it says something a computed tensor type
    can contradict: a tensor's element type, or a sequence, optional or map at all (its
    element types perhaps unknown: ``seq(?)``)."""
    if isinstance(v.type, TensorType):
        return type_string(v.type)
    if _declared_kind(v):
        return type_string(v.type) or f"{type(v.type).__name__.removesuffix('Type').lower()}(?)"
    return None


def _declared_kind(v: Value) -> bool:
    """Whether `v` is declared a sequence, an optional or a map (not a tensor)."""
    return isinstance(v.type, SequenceType | OptionalType | MapType)


def _single_tensor_dtype(type_str: str):
    """The element type of ``tensor(NAME)``, else None."""
    if not (type_str.startswith("tensor(") and type_str.endswith(")")):
        return None
    try:
        return dtype_from_onnx(TensorProto.DataType.Value(type_str[7:-1].upper()))
    except (ValueError, KeyError):
        return None


def _fill_dtype(v: Value, dtype, shape=None) -> None:
    """Give `v` the element type `dtype` where its type is unknown or has no element type."""
    t = v.type
    if t is None:
        v.type = TensorType(dtype, shape)
    elif isinstance(t, TensorType) and t.dtype is None:
        v.type = TensorType(dtype, t.shape)


# Constant's value attributes other than ``value`` and ``sparse_value``: element type, rank
_CONSTANT_SCALARS = {"value_float": (TensorProto.FLOAT, 0), "value_floats": (TensorProto.FLOAT, 1),
                     "value_int": (TensorProto.INT64, 0), "value_ints": (TensorProto.INT64, 1),
                     "value_string": (TensorProto.STRING, 0),
                     "value_strings": (TensorProto.STRING, 1)}


def _fill_constant_type(p, outputs: list[Value]) -> None:
    """Give a Constant's output the element type (and shape) of its value, so that the
    nodes using it are checked against it (``Add(x: float, Constant int64)``)."""
    values = [a for a in p.attribute if a.name in _CONSTANT_SCALARS
              or a.name in ("value", "sparse_value")]
    if len(values) != 1:  # ONNX Runtime refuses it at load, in a body that never runs too
        raise ModelError(f"{_where(p)}: a Constant needs exactly one value attribute (value, "
                         f"sparse_value, value_float(s), value_int(s), value_string(s)); it "
                         f"has {len(values)}")
    if len(p.attribute) != 1 or len(outputs) != 1 or p.attribute[0].ref_attr_name:
        return  # the attribute check or the importer reports the rest
    a = p.attribute[0]
    if a.name == "value" and a.type == AttributeProto.TENSOR:
        code, shape = a.t.data_type, tuple(int(d) for d in a.t.dims)
    elif a.name == "sparse_value" and a.type == AttributeProto.SPARSE_TENSOR:
        code, shape = a.sparse_tensor.values.data_type, tuple(int(d)
                                                              for d in a.sparse_tensor.dims)
    elif a.name in _CONSTANT_SCALARS:
        code, rank = _CONSTANT_SCALARS[a.name]
        n = len(a.floats) + len(a.ints) + len(a.strings)
        shape = () if rank == 0 else (n,)
    else:
        return
    if code == TensorProto.UNDEFINED or any(d < 0 for d in shape):
        return
    try:
        dtype = dtype_from_onnx(code)
    except Exception:  # noqa: BLE001 - an element type without IR counterpart: left unknown
        return
    _fill_checked(outputs[0], dtype, shape, f"{_where(p)}: output '{outputs[0].name}'",
                  f"its '{a.name}' makes")


def _check_arity(p, schema, what: str) -> None:
    n_in = len(p.input)  # an empty name is an optional input left out, and still counts
    if not schema.min_input <= n_in <= schema.max_input:
        raise ModelError(f"{what}: takes {_range(schema.min_input, schema.max_input)} "
                         f"inputs, got {n_in}")
    n_out = len(p.output)
    if not schema.min_output <= n_out <= schema.max_output:
        raise ModelError(f"{what}: has {_range(schema.min_output, schema.max_output)} "
                         f"outputs, the node lists {n_out}")
    single = onnx.defs.OpSchema.FormalParameterOption.Single
    for i, (name, formal) in enumerate(zip(p.input, schema.inputs)):
        if not name and formal.option == single:
            raise ModelError(f"{what}: input {i} ('{formal.name}') is required but its name is "
                             "empty")


def _range(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if hi >= 2**31 - 1:
        return f"at least {lo}"
    return f"{lo} to {hi}"


def _check_attributes(p, schema, what: str) -> None:
    given = {a.name: a for a in p.attribute}
    for name in given:
        if name not in schema.attributes and not name.startswith("__"):
            # ONNX's schema check in ONNX Runtime refuses it ("Unrecognized attribute"): an
            # attribute of another version (ReduceMin's ``axes`` from opset 18 on) would
            # otherwise be ignored silently
            raise ModelError(f"{what}: attribute '{name}' is not one of the op's at this "
                             f"opset ({', '.join(sorted(schema.attributes)) or 'none'})")
    for name, spec in schema.attributes.items():
        a = given.get(name)
        if a is None:
            if spec.required:
                raise ModelError(f"{what}: required attribute '{name}' is missing")
            continue
        want = int(spec.type)
        if a.ref_attr_name or AttributeProto.UNDEFINED in (a.type, want):
            continue
        if int(a.type) != want:
            raise ModelError(f"{what}: attribute '{name}' must be "
                             f"{AttributeProto.AttributeType.Name(want)}, got "
                             f"{AttributeProto.AttributeType.Name(a.type)}")
        if a.type == AttributeProto.INT and name in _BOOLEAN.get(p.op_type, ()) \
                and a.i not in (0, 1):
            raise ModelError(f"{what}: attribute '{name}' is {a.i}; it must be 0 or 1 "
                             "(ONNX Runtime reads other values as false in some ops, as true "
                             "in others)")
    clip = given.get("clip")
    if p.op_type in ("LSTM", "GRU") and clip is not None and clip.type == AttributeProto.FLOAT \
            and not clip.f > 0:
        raise ModelError(f"{what}: attribute 'clip' is {clip.f}; it must be above 0 (ONNX "
                         "Runtime refuses it; OpenVINO reads 0 as no clipping)")
    if p.op_type in DEFAULT_ACTIVATIONS:
        _check_activation_count(p.op_type, given, what)
    perm = given.get("perm")
    if p.op_type == "Transpose" and perm is not None and perm.type == AttributeProto.INTS \
            and sorted(perm.ints) != list(range(len(perm.ints))):
        raise ModelError(f"{what}: attribute 'perm' {list(perm.ints)} is not a permutation "
                         f"of 0..{len(perm.ints) - 1}")


#: ops whose ``axis`` attribute ONNX's shape inference checks against the first input's rank
#: at load (ONNX Runtime refuses the model then), and how far past the last axis it may point
_AXIS_WITHIN_RANK = {"Gather": 0, "GatherElements": 0, "ScatterElements": 0, "Concat": 0,
                     "Split": 0, "ArgMax": 0, "ArgMin": 0, "Flatten": 1}


def _attribute_and_rank(p, inputs: list[Value | None], name: str, kind):
    """(`name`'s attribute of `kind`, the first input's rank), or None where either is
    unknown."""
    a = next((a for a in p.attribute if a.name == name and a.type == kind), None)
    rank = _rank_of(inputs[0]) if inputs else None
    if a is None or rank is None:
        return None
    return a, rank


def _check_axis(p, inputs: list[Value | None], what: str) -> None:
    """The ``axis`` attribute of `_AXIS_WITHIN_RANK`'s ops within the first input's rank,
    where it is known (an axis of -2**31 in a loop body that never runs: NumPy ran it, JAX
    refused it while tracing)."""
    extra = _AXIS_WITHIN_RANK.get(p.op_type)
    found = None if extra is None else _attribute_and_rank(p, inputs, "axis", AttributeProto.INT)
    if found is None:
        return
    axis, rank = found
    if not -(rank + extra) <= axis.i < rank + extra:
        raise ModelError(f"{what}: attribute 'axis' {axis.i} is outside "
                         f"[{-(rank + extra)}, {rank + extra - 1}] for an input of rank {rank}")


#: the reductions (``ReduceMax``...), whose ``axes`` attribute (before it became an input)
#: names axes of the input
_REDUCTIONS = tuple(sorted(ops_with(Trait.REDUCTION)))


def _check_axes(p, inputs: list[Value | None], what: str) -> None:
    """Unsqueeze's and Squeeze's ``axes`` attribute (opset < 13) within the rank of the
    output (Unsqueeze) or of the input (Squeeze), and a reduction's within the input's rank,
    where the input's rank is known."""
    _check_axis(p, inputs, what)
    if p.op_type == "ReverseSequence":
        _check_reverse_sequence_axes(p, what)
    if p.op_type in _WINDOWED:
        _check_window_attributes(p, inputs, what)
    if p.op_type in _REDUCTIONS:
        _check_reduction_axes_input(p, inputs, what)
    found = _attribute_and_rank(p, inputs, "axes", AttributeProto.INTS) \
        if p.op_type in ("Unsqueeze", "Squeeze", *_REDUCTIONS) else None
    if found is None:
        return
    axes, rank = found
    rank = rank + len(axes.ints) if p.op_type == "Unsqueeze" else rank
    _within(list(axes.ints), rank, what, "attribute 'axes'",
            "an output" if p.op_type == "Unsqueeze" else "an input")


def _check_reverse_sequence_axes(p, what: str) -> None:
    """ReverseSequence's ``batch_axis`` and ``time_axis``: 0 and 1, one each (ONNX Runtime
    refuses others at load; both backends reversed along one axis given twice)."""
    got = {a.name: a.i for a in p.attribute if a.name in ("batch_axis", "time_axis")}
    batch, time = got.get("batch_axis", 1), got.get("time_axis", 0)
    if {batch, time} != {0, 1}:
        raise ModelError(f"{what}: batch_axis={batch} and time_axis={time}; they must be 0 "
                         "and 1, one each")


#: ops whose window attributes give entries per spatial axis of input 0 (`semantics.window`)
_WINDOWED = ("Conv", "ConvTranspose", "ConvInteger", "MaxPool", "AveragePool", "LpPool",
             "DeformConv")


def _check_window_attributes(p, inputs: list[Value | None], what: str) -> None:
    """A window op's ``kernel_shape``, ``strides``, ``dilations`` (one entry per spatial axis)
    and ``pads`` (two) of the length input 0's rank needs, where the rank is known: ONNX
    Runtime refuses another length at load ("Attribute dilations has incorrect size")."""
    rank = _rank_of(inputs[0]) if inputs else None
    spatial = None if rank is None or rank < 2 else rank - 2
    why = window_attribute_error({a.name: a.ints for a in p.attribute
                                  if a.type == AttributeProto.INTS}, spatial)
    if why is not None:
        raise ModelError(f"{what}: {why}" + ("" if spatial is None else
                                             f" (input 0 has rank {rank})"))


def _check_reduction_axes_input(p, inputs: list[Value | None], what: str) -> None:
    """A reduction's ``axes`` input (opset 18, ReduceSum 13) within the data's rank where
    both are known before the run (an initializer or a constant), as ONNX Runtime checks
    them at load, in a branch that never runs too."""
    rank = _rank_of(inputs[0]) if inputs else None
    axes = inputs[1].const if len(inputs) > 1 and inputs[1] is not None else None
    if rank is None or axes is None:
        return
    try:
        values = [int(a) for a in np.asarray(axes).reshape(-1)]
    except (TypeError, ValueError):
        return  # not integers: the type check or the kernel names them
    _within(values, rank, what, f"input 1 'axes' ('{inputs[1].name}')", "an input")


def _within(axes: list[int], rank: int, what: str, which: str, of: str) -> None:
    bad = [a for a in axes if not -rank <= a < rank]
    if bad:
        raise ModelError(f"{what}: {which} {axes} holds {bad[0]}, outside "
                         f"[{-rank}, {rank - 1}] for {of} of rank {rank}")


_REDUCE = ("keepdims", "noop_with_empty_axes")
#: int attributes of standard ops that hold a boolean (or a choice of two, ``layout``): a
#: value other than 0 and 1 is read as true by some peers and as false by others
_BOOLEAN: dict[str, tuple[str, ...]] = {
    "TopK": ("largest", "sorted"),
    "ArgMax": ("keepdims", "select_last_index"), "ArgMin": ("keepdims", "select_last_index"),
    **{op: _REDUCE for op in _REDUCTIONS},
    "CumSum": ("exclusive", "reverse"),
    "Unique": ("sorted",),
    "Trilu": ("upper",),
    "Gemm": ("transA", "transB"),
    "Mod": ("fmod",),
    "IsInf": ("detect_negative", "detect_positive"),
    "DFT": ("inverse", "onesided"), "STFT": ("onesided",),
    "MaxPool": ("ceil_mode",), "LpPool": ("ceil_mode",),
    "AveragePool": ("ceil_mode", "count_include_pad"),
    "Cast": ("saturate",), "CastLike": ("saturate",), "QuantizeLinear": ("saturate",),
    "SplitToSequence": ("keepdims",), "ConcatFromSequence": ("new_axis",),
    "GRU": ("linear_before_reset", "layout"), "LSTM": ("input_forget", "layout"),
    "RNN": ("layout",),
    "GridSample": ("align_corners",), "AffineGrid": ("align_corners",),
    "Resize": ("exclude_outside",),
    "HannWindow": ("periodic",), "HammingWindow": ("periodic",), "BlackmanWindow": ("periodic",),
    "NonMaxSuppression": ("center_point_box",),
    "BatchNormalization": ("training_mode",),
}


#: ops whose output has one rank whatever the input (``Shape``: a vector)
_OUTPUT_RANK = {"Shape": 1, "Size": 0}
#: ops whose output has the rank of their first input, besides the element-wise ones
#: (`ir.traits`: ``UNARY``, and ``BROADCAST``, the largest rank of their inputs)
_KEEPS_RANK = frozenset({"Slice", "Concat", "Transpose", "Softmax", "LogSoftmax", "Hardmax",
                         "CumSum", "Tile", "Pad", "ReverseSequence"})


#: `Value.meta` key: the rank ONNX's inference gives a value at load where its type has none
#: (the type itself is left alone: the reader may still change what the file declares)
LOAD_RANK = "load_rank"


def _fill_output_rank(p, inputs: list[Value | None], out: Value) -> None:
    """Note the rank that ONNX's shape inference knows at load for the output of `p` where its
    type has none (`LOAD_RANK`): ``Shape`` gives a vector, ``Slice`` and element-wise ops keep
    the rank of their input. ONNX Runtime refuses an ``axis`` beyond that rank at load
    (``Gather(Shape(x), i, axis=5)``, ``Concat(Slice(w), ..., axis=-2**31)`` in a loop body),
    and so does `_check_axis` then."""
    if _rank_of(out) is not None:
        return
    rank = _OUTPUT_RANK.get(p.op_type)
    kind = traits(p.op_type)
    if rank is None and (p.op_type in _KEEPS_RANK or Trait.UNARY in kind):
        rank = _rank_of(inputs[0] if inputs else None)
    elif rank is None and Trait.BROADCAST in kind:
        ranks = [_rank_of(v) for v in inputs]
        rank = None if not ranks or None in ranks else max(ranks)
    if rank is not None:
        out.meta[LOAD_RANK] = rank


def _rank_of(v: Value | None) -> int | None:
    """`v`'s rank: its type's, else the one noted at load (`LOAD_RANK`), else None."""
    if v is None:
        return None
    if isinstance(v.type, TensorType) and v.type.rank is not None:
        return v.type.rank
    return v.meta.get(LOAD_RANK)


def _fill_constant_of_shape_type(p, out: Value) -> None:
    """Give a ConstantOfShape's output the element type of its ``value`` (float32 without
    one, as ONNX says), so that a loop carrying it as another type is refused as ONNX Runtime
    refuses it."""
    value = next((a for a in p.attribute if a.name == "value"), None)
    what = f"{_where(p)}: output '{out.name}'"
    if value is None:
        _fill_checked(out, dtype_from_onnx(TensorProto.FLOAT), None, what,
                      "no 'value' (float zeros) makes")
    elif value.type == AttributeProto.TENSOR:
        try:
            dtype = dtype_from_onnx(value.t.data_type)
        except Exception:  # noqa: BLE001 - not an element type: the importer names it
            return
        _fill_checked(out, dtype, None, what, "its 'value' makes")


#: ops whose ``dtype`` attribute, where given, names their output's element type
_DTYPE_OPS = ("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
              "EyeLike", "Bernoulli", "Multinomial")


def _fill_cast_type(p, outputs: list[Value], what: str, name: str = "to") -> None:
    """Give a Cast's output the element type its ``to`` names (``Mul(Cast(to=uint32),
    float)`` is refused as ONNX Runtime refuses it, not computed in a promoted type), or a
    random op's its ``dtype`` (`name`); an output declared of another element type is
    refused, as ONNX Runtime refuses it."""
    to = next((a for a in p.attribute if a.name == name and a.type == AttributeProto.INT), None)
    if to is None or len(outputs) != 1:
        return
    try:
        dtype = dtype_from_onnx(to.i)
    except Exception:  # noqa: BLE001 - not an element type
        if name == "to":  # Cast's importer names it
            return
        raise ModelError(f"{what}: attribute '{name}' is {to.i}, which is no ONNX element "
                         "type") from None
    _fill_checked(outputs[0], dtype, None, f"{what}: output '{outputs[0].name}'",
                  f"'{name}' makes")


def _fill_checked(v: Value, dtype, shape, what: str, why: str) -> None:
    """`_fill_dtype`, after refusing a declaration of `v` that contradicts `dtype` (ONNX
    Runtime refuses it at load; a run would give a type the file does not declare)."""
    declared = _declared_string(v)
    computed = type_string(TensorType(dtype, None))
    if declared is not None and computed is not None and declared != computed:
        raise ModelError(f"{what} is declared {declared} but {why} it {computed}")
    _fill_dtype(v, dtype, shape)


def check_shared_types(op_type: str, version: int, inputs: list[Value | None],
                       what: str, outputs: list[Value] = ()) -> None:
    """A `ModelError` from `what` where inputs of standard op `op_type` that its schema binds
    to one type parameter (``Add``'s ``T``, ``Where``'s branches, ``Concat``'s inputs,
    ``MatMul``'s operands) have different known element types. For the readers of formats whose
    ops become ONNX's (OpenVINO IR: ``Add`` of f64 and i32 is refused there, where NumPy would
    promote and XLA compute in another type); which types an input allows is not checked (the
    importer casts where the formats differ). An output bound to such a parameter with another
    known element type (an IR port's precision that is not what the layer computes: a Gather
    of i32 data whose port says FP32) is refused too: OpenVINO computes the inputs' type."""
    try:
        schema = onnx.defs.get_schema(op_type, version, "")
    except onnx.defs.SchemaError:
        return
    bound = _check_types(schema, inputs, what, check_allowed=False)
    for k, (formal, v) in enumerate(zip(schema.outputs, outputs)):
        first = bound.get(formal.type_str)
        if first is None or not isinstance(first[2], TensorType) or \
                not isinstance(v.type, TensorType):
            continue
        ts, have = first[0], type_string(v.type)
        if have is not None and have != ts:
            raise ModelError(f"{what}: output {k} is declared {have} but the layer computes "
                             f"{ts} (from input {first[1]})")


def _check_types(schema, inputs: list[Value | None], what: str,
                 check_allowed: bool = True) -> dict:
    """Check the input types; returns ``{type parameter: (type string, input index, type)}``
    for the parameters that bind one type for the whole node."""
    formals = list(schema.inputs)
    bound: dict[str, tuple[str, int, object]] = {}
    if not formals:
        return bound
    constraints = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    for i, v in enumerate(inputs):
        if v is None:
            continue
        if i < len(formals):
            formal = formals[i]
        elif formals[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
            formal = formals[-1]
        else:
            break  # arity was checked: cannot happen
        ts = type_string(v.type)
        param = formal.type_str
        allowed = constraints.get(param, {param})
        if ts is None:
            _check_kind(v, allowed, i, formal.name, what)
            continue
        if check_allowed and ts not in allowed:
            raise ModelError(f"{what}: input {i} ('{formal.name}', value '{v.name}') is {ts}; "
                             f"{_allowed(allowed)} {'is' if len(allowed) == 1 else 'are'} "
                             "allowed there")
        if param not in constraints:
            continue
        variadic_heterogeneous = (formal.option == onnx.defs.OpSchema.FormalParameterOption.
                                  Variadic and not formal.is_homogeneous)
        key = f"{param}#{i}" if variadic_heterogeneous else param
        first = bound.setdefault(key, (ts, i, v.type))
        if first[0] != ts:
            raise ModelError(f"{what}: input {i} ('{formal.name}', value '{v.name}') is {ts} "
                             f"but input {first[1]} is {first[0]}; both have type {param}, "
                             "which must be one type")
    return bound


def _kind(type_strings) -> str | None:
    """"tensor" or "seq" when every type string is of that kind, else None."""
    kinds = {t.split("(")[0] for t in type_strings}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"tensor", "seq"} else None


def _check_kind(v: Value, allowed: set[str], i: int, formal: str, what: str) -> None:
    """A value of unknown type whose producer's schema gives only sequences (or only
    tensors), read where only the other kind is allowed (a sequence fed to ``Add``: ONNX
    Runtime refuses its type)."""
    p = v.producer
    if p is None or p.domain not in ("", "ai.onnx") or p.version is None:
        return
    try:
        schema = onnx.defs.get_schema(p.op_type, p.version, "")
        k = next(j for j, o in enumerate(p.outputs) if o is v)
        out = schema.outputs[min(k, len(schema.outputs) - 1)]
    except (onnx.defs.SchemaError, StopIteration, IndexError):
        return
    made = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}.get(
        out.type_str, [out.type_str])
    have, want = _kind(made), _kind(allowed)
    if have and want and have != want:
        raise ModelError(f"{what}: input {i} ('{formal}', value '{v.name}') is a "
                         f"{'sequence' if have == 'seq' else 'tensor'} ({p.op_type} makes it); "
                         f"{'sequences' if want == 'seq' else 'tensors'} only are allowed there")


def _allowed(allowed: set[str]) -> str:
    items = sorted(allowed)
    if len(items) > 8:
        return ", ".join(items[:8]) + f", ... ({len(items)} types)"
    return ", ".join(items)


def _check_if(p, outputs: list[Value]) -> None:
    """Both branches have as many outputs as the node, of one type each, and the type the
    node's output is declared where it is (ONNX Runtime refuses a declaration it contradicts)."""
    branches = {a.name: a.g for a in p.attribute
                if a.name in ("then_branch", "else_branch") and a.type == AttributeProto.GRAPH}
    for name, g in branches.items():
        if len(g.output) != len(p.output):
            raise ModelError(f"{_where(p)}: {name} has {len(g.output)} outputs; the node has "
                             f"{len(p.output)} (each branch must have as many)")
    if len(branches) == 2:
        for k, (a, b) in enumerate(zip(branches["then_branch"].output,
                                       branches["else_branch"].output)):
            ta, tb = (type_string(type_from_onnx(v.type)) for v in (a, b))
            if ta is not None and tb is not None and ta != tb:
                raise ModelError(f"{_where(p)}: output {k} is {ta} in then_branch ('{a.name}') "
                                 f"but {tb} in else_branch ('{b.name}'); both branches must "
                                 "give one type")
    for name, g in branches.items():
        for k, (b, v) in enumerate(zip(g.output, outputs)):
            tb, declared = type_string(type_from_onnx(b.type)), type_string(v.type)
            if tb is not None and declared is not None and tb != declared:
                raise ModelError(f"{_where(p)}: output {k} ('{v.name}') is declared {declared} "
                                 f"but {name} gives {tb} ('{b.name}')")
