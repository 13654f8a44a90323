"""ONNX ``Scan`` -> canonical `Loop`.

**Scan 9+** (9, 11, 16, 19, 21, 23, 24, 25): ``Scan(init_1..init_N, scan_1..scan_M)`` with body
``(st_1..st_N, si_1..si_M) -> (st_1..st_N, so_1..so_K)`` becomes one loop with ``Carried``
states (``Last`` outputs), ``Sliced`` scan inputs (``keep_axis=False``, ``axis`` from
``scan_input_axes``, stride -1 for direction 1) and ``Concat(new_axis=True)`` outputs (``axis``
from ``scan_output_axes``, ``reverse`` from ``scan_output_directions``). Negative axes (allowed
from version 11) are normalized with the rank when it is known; when the rank is unknown a
negative axis is kept negative (counted from the end at run time: for a sliced input from the
end of the input's axes, for a concat output from the end of the output's axes). The loop has
``equal_slices``: scan inputs of different lengths are an error when it runs (ONNX Runtime:
"Scan inputs have inconsistent sequence lengths"; lengths known when loading are checked
then), and empty ones run no iteration with a `LeniencyWarning` (ONNX Runtime refuses them).

**Scan 8** (batched): inputs ``(sequence_lens?, init_1..init_N, scan_1..scan_M)`` where every
state has a leading batch axis and every scan input is ``[batch, time, ...]``. It becomes an
outer loop over the batch (``Sliced`` axis 0 on states, scan inputs and ``sequence_lens``)
whose body runs an inner loop over time:

- inner ``trip_count`` = the row's sequence length (no ``sequence_lens``: none, the full axis);
- a reverse-direction input is first cut to the row's length with an ONNX ``Slice`` so that
  the reverse walk starts at the row's last valid step;
- inner scan outputs are ``Concat(new_axis=True, length=T)`` where ``T`` (the time-axis length
  of the first scan input, computed with ``Shape``/``Gather`` in the outer body) pads them
  with zeros: outputs past a row's length are zero;
- outer outputs stack the per-row results with ``Concat(axis=0, new_axis=True)``.

The outer loop has ``equal_slices``: inputs of different batch sizes are an error when it
runs, as in ONNX Runtime, and a batch of zero rows warns (ONNX Runtime refuses it). The time
lengths of the scan inputs are checked when loading only, where known: ONNX Runtime runs a
time axis of length zero, so the inner loop cannot have ``equal_slices``.

Nodes the reader inserts (``Shape``, ``Gather``, ``Reshape``, ``Slice``) are given
``version=13`` whatever the model's opset, as the IR allows.

A sequence length above ``T`` is an error in ONNX; canonical loop semantics would silently
run ``min(length, T)`` iterations, and no standard ONNX op can raise the error, so the inner
loop is marked ``strict_slices``: backends then raise an execution
error when its trip count goes beyond its sliced inputs. A negative length runs no iteration
(``negative_trip_count="zero"``; ONNX Runtime rejects lengths below 1, zero included).
"""

from __future__ import annotations

import onnx

from ...errors import ModelError
from ...ir.builder import Builder
from ...ir.graph import Graph, Value
from ...ir.loop import Carried, Concat, Last, Loop, Sliced
from ...ir.types import DataType, TensorType
from .loop_import import (
    body_in_context,
    body_inputs,
    check_allowed,
    check_carried,
    check_scan_output,
)
from .node_import import where
from .scope import Scope

INSERTED_VERSION = 13


def scan_before_8(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                  outputs: list[Value], version: int) -> Loop:
    """The entry for opsets 1 to 7, where ONNX has no Scan."""
    raise ModelError(f"{where(p)}: Scan does not exist in opset {version} (it starts at 8)")


def import_scan8(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                 outputs: list[Value], version: int) -> Loop:
    """Scan-8 (batched, optional ``sequence_lens`` first)."""
    if not inputs:
        raise ModelError(f"{where(p)}: Scan-8 expects sequence_lens (may be empty) then "
                         "states and scan inputs")
    seq_lens, inputs = inputs[0], inputs[1:]
    attrs, m, n, body = _checked(r, p, scope, inputs, outputs, version)
    dirs = _flags(p, attrs, "directions", m)
    _same_lengths(p, [("sequence_lens", seq_lens, 0)] if seq_lens is not None else [],
                  [(f"state {i}", inputs[i], 0) for i in range(n)],
                  [(f"scan input {j}", inputs[n + j], 0) for j in range(m)],
                  what="batch size")
    _same_lengths(p, [(f"scan input {j}", inputs[n + j], 1) for j in range(m)],
                  what="sequence length (axis 1)")
    return _scan8(p, body, seq_lens, inputs[:n], inputs[n:], outputs, dirs)


def import_scan(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                outputs: list[Value], version: int) -> Loop:
    """Scan 9 and later."""
    attrs, m, n, body = _checked(r, p, scope, inputs, outputs, version)
    k = len(outputs) - n
    in_axes = _list(p, attrs, "scan_input_axes", m, 0)
    in_dirs = _flags(p, attrs, "scan_input_directions", m)
    out_axes = _list(p, attrs, "scan_output_axes", k, 0)
    out_dirs = _flags(p, attrs, "scan_output_directions", k)
    ports: list = [Carried(inputs[i], body.inputs[i], body.outputs[i]) for i in range(n)]
    scanned = []
    for j in range(m):
        x = inputs[n + j]
        axis = _axis(p, version, in_axes[j], _rank(x), f"scan_input_axes[{j}]")
        ports.append(Sliced(x, body.inputs[n + j], axis=axis, stride=-1 if in_dirs[j] else 1))
        scanned.append((f"scan input {j}", x, axis))
    _same_lengths(p, scanned, what="sequence length")
    outs: list = [Last(body.outputs[i], outputs[i]) for i in range(n)]
    for j in range(k):
        res = body.outputs[n + j]
        r_out = None if _rank(res) is None else _rank(res) + 1
        axis = _axis(p, version, out_axes[j], r_out, f"scan_output_axes[{j}]")
        outs.append(Concat(res, outputs[n + j], axis=axis, reverse=bool(out_dirs[j]),
                           new_axis=True))
    return Loop(body, ports, outs, name=p.name, origin="onnx.Scan",
                origin_attrs={"opset": version, "version": r.since(p, version),
                              "num_scan_inputs": m}, equal_slices=True)


def _checked(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
             outputs: list[Value], version: int) -> tuple[dict, int, int, Graph]:
    """The checks every Scan version shares, on its state and scan inputs: the int
    attributes, ``num_scan_inputs`` (M), the number of states (N), the converted body, and
    the types the body gives its states, scan inputs and scan outputs."""
    attrs = r.int_attrs(p)
    if "num_scan_inputs" not in attrs:
        raise ModelError(f"{where(p)}: required attribute 'num_scan_inputs' is missing")
    m = attrs["num_scan_inputs"]
    if m < 1 or m > len(inputs):
        raise ModelError(f"{where(p)}: num_scan_inputs={m} but the node has {len(inputs)} "
                         "state and scan inputs (need 1 <= num_scan_inputs <= that)")
    n = len(inputs) - m
    for i, v in enumerate(inputs):
        if v is None:
            kind = "state" if i < n else "scan input"
            raise ModelError(f"{where(p)}: {kind} input {i} is empty")
    for a in p.attribute:
        if a.name == "body" and a.type == onnx.AttributeProto.GRAPH and \
                len(body_inputs(a.g)) != n + m:
            raise ModelError(f"{where(p)}: body has {len(body_inputs(a.g))} inputs; expected "
                             f"N + M = {n + m} ({n} states, {m} scan inputs)")
    body = body_in_context(r, p, scope)
    if len(body.inputs) != n + m:
        raise ModelError(f"{where(p)}: body has {len(body.inputs)} inputs; expected N + M = "
                         f"{n + m} ({n} states, {m} scan inputs)")
    k = len(body.outputs) - n
    if k < 0:
        raise ModelError(f"{where(p)}: body has {len(body.outputs)} outputs; expected at least "
                         f"N = {n} (the states)")
    if len(outputs) != n + k:
        raise ModelError(f"{where(p)}: has {len(outputs)} outputs; the body defines N + K = "
                         f"{n + k} ({n} states, {k} scan outputs)")
    for i in range(n):
        check_carried(p, f"state {i}", inputs[i], body.inputs[i], body.outputs[i], outputs[i])
    for j in range(k):
        check_scan_output(p, f"scan output {j}", body.outputs[n + j], outputs[n + j])
    check_allowed(p, "Scan", version, 1 if version == 8 else 0,
                  [(f"state {i}", body.inputs[i]) for i in range(n)]
                  + [(f"scan input {j}", body.inputs[n + j]) for j in range(m)]
                  + [(f"scan output {j}", body.outputs[n + j]) for j in range(k)])
    for j in range(m):
        x, param = inputs[n + j], body.inputs[n + j]
        tx, tp = x.type, param.type
        if isinstance(tx, TensorType) and isinstance(tp, TensorType) and None not in (
                tx.dtype, tp.dtype) and tx.dtype != tp.dtype:
            raise ModelError(f"{where(p)}: scan input {j} ('{x.name}') is {tx.dtype} but the "
                             f"body reads it as {tp.dtype} ('{param.name}')")
        drop = 2 if version == 8 else 1  # the scan axis, and Scan-8's batch axis
        rx, rp = _rank(x), _rank(param)
        if None not in (rx, rp) and rx - drop != rp:  # ONNX Runtime refuses it at load
            raise ModelError(f"{where(p)}: scan input {j} ('{x.name}') has rank {rx}, so the "
                             f"body reads elements of rank {rx - drop}, but it declares "
                             f"'{param.name}' of rank {rp}")
    return attrs, m, n, body


def _same_lengths(p, *groups, what: str) -> None:
    """Inputs whose lengths on the given axes are known statically must agree (ONNX Runtime
    refuses inconsistent lengths when it runs the node)."""
    first = None
    for name, v, axis in (e for g in groups for e in g):
        t = v.type
        if not isinstance(t, TensorType) or t.shape is None or not -len(t.shape) <= axis < len(
                t.shape):
            continue
        d = t.shape[axis]
        if not isinstance(d, int):
            continue
        if first is None:
            first = (name, v, d)
        elif d != first[2]:
            raise ModelError(f"{where(p)}: inputs of different {what}: {first[0]} "
                             f"('{first[1].name}') has {first[2]}, {name} ('{v.name}') has {d}")


def _list(p, attrs, name, count, default) -> list[int]:
    vals = attrs.get(name)
    if vals is None:
        return [default] * count
    if not isinstance(vals, list) or len(vals) != count:
        raise ModelError(f"{where(p)}: attribute '{name}' must list {count} values, got {vals}")
    return vals


def _flags(p, attrs, name, count) -> list[int]:
    vals = _list(p, attrs, name, count, 0)
    for v in vals:
        if v not in (0, 1):
            raise ModelError(f"{where(p)}: attribute '{name}' entries must be 0 or 1, got {vals}")
    return vals


def _rank(v: Value) -> int | None:
    t = v.type
    return t.rank if isinstance(t, TensorType) else None


def _axis(p, version: int, axis: int, rank: int | None, what: str) -> int:
    if axis < 0 and version < 11:
        raise ModelError(f"{where(p)}: {what}={axis} is negative; negative axes need Scan-11+")
    if rank is None:
        return axis
    if not -rank <= axis < rank:
        raise ModelError(f"{where(p)}: {what}={axis} is out of range for rank {rank} "
                         f"(expected {-rank} <= axis < {rank})")
    return axis + rank if axis < 0 else axis


# Scan 8 ------------------------------------------------------------------------------------


def _drop0(t):
    if isinstance(t, TensorType) and t.shape:
        return TensorType(t.dtype, t.shape[1:])
    return TensorType(t.dtype) if isinstance(t, TensorType) else None


def _batch_declared(out: Value, row) -> None:
    """Give outer output `out` the type of its rows with the batch axis in front where its
    declaration has another rank (a declaration without the batch axis)."""
    t = out.type
    if not (isinstance(row, TensorType) and row.shape is not None):
        return
    if isinstance(t, TensorType) and t.shape is not None and len(t.shape) != len(row.shape) + 1:
        out.type = TensorType(t.dtype or row.dtype, (None, *row.shape))


def _known(*types):
    """The first of `types` whose shape is known, else the first that is a type at all."""
    for t in types:
        if isinstance(t, TensorType) and t.shape is not None:
            return t
    return next((t for t in types if t is not None), None)


def _with_time(t):
    """A step's type with a leading time axis of unknown length (a row's scan output)."""
    if isinstance(t, TensorType) and t.shape is not None:
        return TensorType(t.dtype, (None, *t.shape))
    return t


def _scan8(p, body: Graph, seq_lens, states, scans, outputs, dirs) -> Loop:
    n, m, k = len(states), len(scans), len(outputs) - len(states)
    base = p.name or "scan8"
    for j, x in enumerate(scans):
        rk = _rank(x)
        if rk is not None and rk < 2:
            raise ModelError(f"{where(p)}: Scan-8 scan input {j} has rank {rk}; expected "
                             "[batch, time, ...] (rank >= 2)")
    row = Graph(f"{base}/row")
    s_rows = [Value(f"{base}/state{i}_row", _drop0(v.type)) for i, v in enumerate(states)]
    x_rows = [Value(f"{base}/scan{j}_row", _drop0(v.type)) for j, v in enumerate(scans)]
    row.inputs = s_rows + x_rows
    b = Builder(row, base, opset=INSERTED_VERSION, nodes=row.nodes)
    outer_ports: list = [Sliced(v, pr, axis=0) for v, pr in zip(states, s_rows)]
    outer_ports += [Sliced(v, pr, axis=0) for v, pr in zip(scans, x_rows)]
    i64 = TensorType(DataType.INT64, ())
    length = t_len = None
    if seq_lens is not None:
        length = Value(f"{base}/seq_len", i64)
        row.inputs.append(length)
        outer_ports.append(Sliced(seq_lens, length, axis=0))
        shape = b.node("Shape", [x_rows[0]], name=f"{base}/time_shape",
                       type=TensorType(DataType.INT64, (None,)))
        t_len = b.node("Gather", [shape, b.i64(0, name=f"{base}/zero")], {"axis": 0},
                       name=f"{base}/time_len", type=i64)
    inner_x = list(x_rows)
    if seq_lens is not None and any(dirs):
        end = b.node("Reshape", [length, b.i64([1], name=f"{base}/shape1")],
                     name=f"{base}/seq_end", type=TensorType(DataType.INT64, (1,)))
        zero1 = b.i64([0], name=f"{base}/start0")
        for j in range(m):
            if dirs[j]:
                inner_x[j] = b.node("Slice", [x_rows[j], zero1, end, zero1],
                                    name=f"{base}/scan{j}_valid",
                                    type=_unknown_first(x_rows[j].type))
    ports: list = [Carried(s_rows[i], body.inputs[i], body.outputs[i]) for i in range(n)]
    ports += [Sliced(inner_x[j], body.inputs[n + j], axis=0, stride=-1 if dirs[j] else 1)
              for j in range(m)]
    # a row's types come from the states and the body, not from the outer declarations, which
    # some files give without the batch axis (ONNX Runtime ignores them)
    row_outs = [Value(f"{base}/state{i}_final",
                      _known(_drop0(states[i].type), body.outputs[i].type,
                             _drop0(outputs[i].type))) for i in range(n)]
    row_outs += [Value(f"{base}/out{j}_row",
                       _known(_with_time(body.outputs[n + j].type), _drop0(outputs[n + j].type)))
                 for j in range(k)]
    outs: list = [Last(body.outputs[i], row_outs[i]) for i in range(n)]
    outs += [Concat(body.outputs[n + j], row_outs[n + j], axis=0, new_axis=True, length=t_len)
             for j in range(k)]
    inner = Loop(body, ports, outs, trip_count=length, name=f"{base}/time", origin="onnx.Scan",
                 origin_attrs={"version": 8, "part": "time", "sequence_lens": seq_lens is not None},
                 negative_trip_count="zero", strict_slices=seq_lens is not None)
    row.add(inner)
    row.outputs = list(row_outs)
    for rv, ov in zip(row_outs, outputs):
        _batch_declared(ov, rv.type)
    outer_outs = [Concat(rv, ov, axis=0, new_axis=True) for rv, ov in zip(row_outs, outputs)]
    return Loop(row, outer_ports, outer_outs, name=p.name, origin="onnx.Scan",
                origin_attrs={"version": 8, "part": "batch", "num_scan_inputs": m,
                              "directions": list(dirs)}, equal_slices=True)


def _unknown_first(t):
    if isinstance(t, TensorType) and t.shape:
        return TensorType(t.dtype, (None, *t.shape[1:]))
    return t
