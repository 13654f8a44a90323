"""The canonical loop: one IR node for every loop flavour, with explicit port roles.

ONNX Loop and Scan, OpenVINO TensorIterator and Loop, and TensorRT-style loops all import into
`Loop`. Its meaning, as a plain Python loop (``body`` computes every body value from the params)::

    state = {p.param: p.value for p in carried}          # Carried: initial values
    if equal_slices and len({s.count() for s in sliced}) > 1:
        raise ExecutionError                               # sliced inputs of unequal lengths
    if equal_slices and sliced and sliced[0].count() == 0:
        warn(LeniencyWarning)                              # a sequence of length zero
    cond = initial_condition if given else True
    outs = {o: [] for o in concat outputs}
    k = 0
    while (trip_count is None or k < trip_count) and cond:
        pieces_left = all(k < s.count() for s in sliced)
        params = {**state, **{i.param: i.value for i in invariant},
                  iteration_param: k, condition_param: cond}
        if pieces_left:
            params.update({s.param: s.piece(k) for s in sliced})
        if precondition is not None and not body(params)[precondition]:
            break                                          # TensorRT kWHILE, tested first
        if not pieces_left:
            if strict_slices: raise ExecutionError        # iterating beyond a sliced input
            break
        results = body(params)
        for o in concat outputs: outs[o].append(results[o.result])
        state = {c.param: results[c.result] for c in carried}
        if condition_result is not None: cond = results[condition_result]
        k += 1
    Last(r) -> value of r in the last iteration (for a carried result and zero iterations:
               the carried port's initial value)
    Concat  -> outs joined along `axis` (stacked on a new axis when `new_axis`), reversed when
               `reverse`, padded with zeros to `length` when given

The number of iterations is the least of: the trip count, the slice count of every sliced
input, and the first iteration whose condition is false. A kept-axis slice over the whole
axis (start 0, end -1) whose `part_size` does not divide the axis is an execution error, as in
OpenVINO. An absent trip count, or one >=
INT32_MAX (what exporters write for "unbounded"), is unbounded; a negative one is unbounded or
zero as `Loop.negative_trip_count` says.

`Loop.equal_slices` (ONNX Scan) makes the sliced inputs one sequence: they must all yield the
same number of pieces, else the loop is an execution error that names the inputs and their
lengths (ONNX Runtime: "Scan inputs have inconsistent sequence lengths"), rather than running
to the shortest. When that common length is zero the loop runs no iteration, as any loop
whose sliced inputs are empty (carried values unchanged, concatenated outputs empty, with the
entry shape their result declares), and warns with a `LeniencyWarning`: ONNX Runtime refuses
an empty scan input, and the reference evaluator a Scan with scan outputs over one.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from .graph import Graph, Node, Value
from .types import TensorType

UNBOUNDED_TRIP_COUNT = 2**31 - 1  # a trip count at or above this means "no limit"


@dataclass(eq=False)
class Invariant:
    """`param` sees `value` unchanged in every iteration."""

    value: Value
    param: Value


@dataclass(eq=False)
class Sliced:
    """Iteration k binds `param` to the k-th piece of `value` along `axis`.

    `start` and `end` are fence posts on the axis (between elements): a non-negative post
    counts from the front, a negative one from the back with -1 being the end of the axis
    (post ``dim``), as in OpenVINO. The iterated range is ``[min(s, e), max(s, e))`` after
    resolving. `stride` > 0 walks that range from the front, < 0 from the back, taking
    ``|stride|`` steps between pieces of `part_size` elements::

        lo, hi = sorted(resolve(start), resolve(end))
        count = (hi - lo - part_size) // abs(stride) + 1          # 0 if hi - lo < part_size
        piece(k) = x[lo + k*stride : lo + k*stride + part_size]          if stride > 0
                 = x[hi - k*|stride| - part_size : hi - k*|stride|]      if stride < 0

    `keep_axis=True` (OpenVINO) keeps the axis with size `part_size`; `False` (ONNX Scan,
    TensorRT iterators, requires part_size 1) removes it, so the piece has rank one less.
    """

    value: Value
    param: Value
    axis: int = 0
    start: int = 0
    end: int = -1
    stride: int = 1
    part_size: int = 1
    keep_axis: bool = False

    @property
    def reverse(self) -> bool:
        return self.stride < 0

    def bounds(self, dim: int) -> tuple[int, int]:
        """Resolved ``(lo, hi)`` fence posts for an axis of length `dim`."""
        s = self.start if self.start >= 0 else dim + 1 + self.start
        e = self.end if self.end >= 0 else dim + 1 + self.end
        lo, hi = (s, e) if s <= e else (e, s)
        return max(lo, 0), min(hi, dim)

    def count(self, dim: int) -> int:
        """Number of pieces an axis of length `dim` yields."""
        lo, hi = self.bounds(dim)
        if hi - lo < self.part_size:
            return 0
        return (hi - lo - self.part_size) // abs(self.stride) + 1

    def piece_start(self, k: int, dim: int) -> int:
        """Index of the first element of piece k."""
        lo, hi = self.bounds(dim)
        if self.stride > 0:
            return lo + k * self.stride
        return hi + k * self.stride - self.part_size


@dataclass(eq=False)
class Carried:
    """The back edge: iteration 0 sees `value` in `param`, iteration k+1 sees `result` of k."""

    value: Value
    param: Value
    result: Value


InputPort = Union[Invariant, Sliced, Carried]


@dataclass(eq=False)
class Last:
    """`output` is the value of body value `result` after the last iteration."""

    result: Value
    output: Value


@dataclass(eq=False)
class Concat:
    """`output` joins the per-iteration values of body value `result`.

    `new_axis=True` (ONNX scan outputs, TensorRT kCONCATENATE) stacks them on a new axis at
    `axis`; `False` (OpenVINO) concatenates along the existing `axis`. `reverse` puts the last
    iteration first. `length`, an outer value (TensorRT), pads the result with zeros to that
    many entries on the axis; a length below the iteration count is an execution error.
    """

    result: Value
    output: Value
    axis: int = 0
    reverse: bool = False
    new_axis: bool = True
    length: Value | None = None
    #: when set, a run of no iteration is this `ExecutionError` instead of an empty output
    #: (`passes.sequence_scan_outputs`: the join of a list that stays empty is an error)
    empty_error: str | None = None


OutputPort = Union[Last, Concat]


class Loop(Node):
    """The canonical loop node (see the module docstring for its meaning).

    ``inputs`` is derived: ``[trip_count, initial_condition, *port values, *concat lengths]``
    (the first two may be ``None``). ``outputs`` follows ``output_ports``. ``origin`` says which
    flavour it was read from (``"onnx.Loop"``, ``"onnx.Scan"``, ``"openvino.TensorIterator"``,
    ``"openvino.Loop"``, ``"network"``), ``origin_attrs`` what that flavour needs to be written
    back as it was (purely informative: writers must work from the ports alone).
    ``negative_trip_count`` says what a negative trip count means at run time: ``"unbounded"``
    (OpenVINO's -1, the default) or ``"zero"`` (ONNX: ONNX Runtime and the reference evaluator
    run no iteration). ``strict_slices`` makes iterating beyond the end of a sliced input an
    execution error (TensorRT iterators, ONNX Scan-8 ``sequence_lens``) instead of the end of
    the loop: a trip count above a slice count, or a condition still true when the shortest
    sliced input runs out. ``equal_slices`` (ONNX Scan) makes sliced inputs of different
    lengths an execution error, and warns when they are empty (see the module docstring).
    """

    def __init__(
        self,
        body: Graph,
        input_ports: list[InputPort] | None = None,
        output_ports: list[OutputPort] | None = None,
        *,
        trip_count: Value | None = None,
        initial_condition: Value | None = None,
        condition_result: Value | None = None,
        condition_param: Value | None = None,
        precondition: Value | None = None,
        iteration_param: Value | None = None,
        name: str = "",
        origin: str = "",
        origin_attrs: dict[str, Any] | None = None,
        negative_trip_count: str = "unbounded",
        strict_slices: bool = False,
        equal_slices: bool = False,
    ):
        super().__init__("Loop", (), (), {"body": body}, domain="itergraph", version=1, name=name)
        self.input_ports: list[InputPort] = list(input_ports or [])
        self.output_ports: list[OutputPort] = []
        self.trip_count = trip_count
        self.initial_condition = initial_condition
        self.condition_result = condition_result
        self.condition_param = condition_param
        self.precondition = precondition
        self.iteration_param = iteration_param
        self.origin = origin
        self.origin_attrs: dict[str, Any] = dict(origin_attrs or {})
        if negative_trip_count not in ("unbounded", "zero"):
            raise ValueError("negative_trip_count must be 'unbounded' or 'zero'")
        self.negative_trip_count = negative_trip_count
        self.strict_slices = strict_slices
        self.equal_slices = equal_slices
        for p in output_ports or []:
            self.add_output(p)

    @property
    def body(self) -> Graph:
        return self.attrs["body"]

    def iteration_form(self) -> tuple[Any, tuple[int, ...]]:
        """NumPy dtype and shape in which the body receives the iteration number: int64 ``()``
        unless `iteration_param` declares another integer type, and ``(1,)`` when it declares
        any rank above 0 (as ONNX Runtime feeds it; OpenVINO's ``[1]`` current iteration)."""
        t = self.iteration_param.type if self.iteration_param is not None else None
        if not isinstance(t, TensorType):
            return np.dtype(np.int64), ()
        dtype = np.dtype(t.dtype.numpy) if t.dtype is not None else np.dtype(np.int64)
        return dtype, (1,) if t.shape else ()

    @body.setter
    def body(self, g: Graph) -> None:
        self.attrs["body"] = g

    def add_output(self, port: OutputPort) -> Value:
        """Append an output port; its `output` value becomes this node's next output."""
        self.output_ports.append(port)
        self.adopt(port.output)
        return port.output

    def set_output_ports(self, ports: list[OutputPort]) -> None:
        self.output_ports = []
        self.outputs = []
        for p in ports:
            self.add_output(p)

    @property
    def inputs(self) -> list[Value | None]:  # type: ignore[override]
        ins: list[Value | None] = [self.trip_count, self.initial_condition]
        ins.extend(p.value for p in self.input_ports)
        ins.extend(p.length for p in self.output_ports
                   if isinstance(p, Concat) and p.length is not None)
        return ins

    @inputs.setter
    def inputs(self, values) -> None:
        raise AttributeError("Loop inputs are derived from its ports; edit the ports instead")

    def body_results(self) -> list[Value]:
        """Port results, condition result and precondition: body values, or outer values read
        like captures (a `Last` of an outer value is that value whenever the loop runs)."""
        vals = [self.condition_result, self.precondition]
        vals += [p.result for p in self.input_ports if isinstance(p, Carried)]
        vals += [p.result for p in self.output_ports]
        return [v for v in vals if v is not None]

    def ports_of(self, kind: type) -> list:
        return [p for p in self.input_ports if isinstance(p, kind)]

    @property
    def carried(self) -> list[Carried]:
        return self.ports_of(Carried)

    @property
    def sliced(self) -> list[Sliced]:
        return self.ports_of(Sliced)

    @property
    def invariant(self) -> list[Invariant]:
        return self.ports_of(Invariant)

    def carried_for_result(self, result: Value) -> Carried | None:
        for c in self.carried:
            if c.result is result:
                return c
        return None

    def replace_input(self, old: Value, new: Value) -> None:
        """Rebind every port (and the special inputs) that read `old` to `new`."""
        if self.trip_count is old:
            self.trip_count = new
        if self.initial_condition is old:
            self.initial_condition = new
        for p in self.input_ports:
            if p.value is old:
                p.value = new
        for p in self.output_ports:
            if isinstance(p, Concat) and p.length is old:
                p.length = new


#: Keyword parameters of `Loop` that say nothing about what it computes: not flags.
INFORMATIVE = frozenset({"name", "origin", "origin_attrs"})


def loop_flags() -> frozenset[str]:
    """The names of `Loop`'s flags, read from its signature: its keyword-only parameters that
    are neither body or outer values (``trip_count``, ``condition_param``, ...) nor
    `INFORMATIVE`. Every consumer of `Loop` (both backends, the writers, `clone`, `verify`)
    declares in ``HANDLES_LOOP_FLAGS`` the flags it acts on and in ``IGNORES_LOOP_FLAGS``
    (flag -> why) those that do not change what it does; ``tests/ir/test_loop_flags.py``
    fails when a flag is added that a consumer has not decided about."""
    params = inspect.signature(Loop.__init__).parameters.values()
    return frozenset(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY
                     and "Value" not in str(p.annotation) and p.name not in INFORMATIVE)
