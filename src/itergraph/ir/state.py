"""Model state: variables that keep a value from one run of a model to the next.

Two nodes of the ``org.openvinotoolkit`` domain (OpenVINO's ``ReadValue``/``Assign``), only
in a main graph, never in a loop body or branch:

- ``ReadValue(init?)``, attributes ``variable_id`` (str) and ``variable_type`` (a
  `TensorType`: the variable's element type and shape, dims unknown as ``None``): the value
  the variable holds when the run starts. A variable not yet assigned (first run, or after a
  reset) holds ``init``, or without ``init`` zeros of the variable's type (an unknown dim is
  0, as OpenVINO's CPU plugin makes it).
- ``Assign(new_value)``, attribute ``variable_id``: stores ``new_value`` for the *next* run
  (a ``ReadValue`` of the same run still sees the value the run started with); its output is
  ``new_value`` itself.

Each variable has exactly one ``ReadValue`` and at most one ``Assign`` (OpenVINO's
specification expects one pair); `variables` collects and checks them. Running a model with
state is `passes.state_io`'s business: it turns the nodes into graph inputs and outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError, UnsupportedError, where
from .graph import Graph, Node
from .traits import OPENVINO_DOMAIN
from .types import TensorType

READ = "ReadValue"
ASSIGN = "Assign"


@dataclass(frozen=True)
class Variable:
    """One variable: its id, declared type, and its two nodes in the main graph."""

    id: str
    type: TensorType
    read: Node
    assign: Node | None

    @property
    def init(self):
        """The ``init`` input of the ``ReadValue`` (``None``: zeros)."""
        ins = self.read.inputs
        return ins[0] if ins else None


def is_state_node(node: Node) -> bool:
    return node.domain == OPENVINO_DOMAIN and node.op_type in (READ, ASSIGN)


def has_state(graph: Graph) -> bool:
    """Whether `graph` (a main graph) reads or assigns a variable."""
    return any(is_state_node(n) for n in graph.nodes)


def variables(graph: Graph) -> dict[str, Variable]:
    """The variables of main graph `graph` by id, in the order of their ``ReadValue`` nodes.

    Errors (`ModelError`, naming the node and the element it was read from): an ``Assign``
    with no ``ReadValue`` of its variable, two ``ReadValue`` or two ``Assign`` nodes of one
    variable, an ``Assign`` or ``init`` whose known element type or dims differ from the
    variable's. `UnsupportedError`: a state node inside a loop body or branch.
    """
    for g, n in graph.walk():
        if g is not graph and is_state_node(n):
            raise UnsupportedError(f"{where(n)}: variables are read and assigned only in the "
                                   "main graph, not in a loop body or If branch")
    reads: dict[str, Node] = {}
    assigns: dict[str, Node] = {}
    for n in graph.nodes:
        if not is_state_node(n):
            continue
        vid = n.attrs.get("variable_id")
        if not isinstance(vid, str) or not vid:
            raise ModelError(f"{where(n)}: no variable_id")
        table = reads if n.op_type == READ else assigns
        if vid in table:
            raise ModelError(f"{where(n)}: variable '{vid}' already has a {n.op_type} "
                             f"({where(table[vid])}); a variable has one ReadValue and one "
                             "Assign")
        table[vid] = n
    for vid, a in assigns.items():
        if vid not in reads:
            raise ModelError(f"{where(a)}: Assign to variable '{vid}', which no ReadValue "
                             "declares")
    out = {}
    for vid, r in reads.items():
        t = r.attrs.get("variable_type")
        if not isinstance(t, TensorType):
            raise ModelError(f"{where(r)}: variable '{vid}' has no variable_type")
        if r.inputs:
            _check_fits(r, r.inputs[0], t, "its init value")
        a = assigns.get(vid)
        if a is not None:
            if len(a.inputs) != 1 or a.inputs[0] is None:
                raise ModelError(f"{where(a)}: an Assign takes one input")
            _check_fits(a, a.inputs[0], t, "the assigned value")
        out[vid] = Variable(vid, t, r, a)
    return out


def _check_fits(node: Node, v, var_type: TensorType, what: str) -> None:
    t = v.type if v is not None else None
    if not isinstance(t, TensorType):
        return
    vid = node.attrs.get("variable_id")
    if var_type.dtype is not None and t.dtype is not None and t.dtype != var_type.dtype:
        raise ModelError(f"{where(node)}: {what} is {t.dtype}, variable '{vid}' holds "
                         f"{var_type.dtype}")
    if var_type.shape is not None and t.shape is not None:
        if len(t.shape) != len(var_type.shape) or any(
                isinstance(a, int) and isinstance(b, int) and a != b
                for a, b in zip(t.shape, var_type.shape)):
            raise ModelError(f"{where(node)}: {what} has shape {_dims(t.shape)}, variable "
                             f"'{vid}' has shape {_dims(var_type.shape)}")


def _dims(shape) -> str:
    return "[" + ",".join(str(d) if isinstance(d, int) else "?" for d in shape) + "]"


def zero_shape(t: TensorType) -> tuple[int, ...]:
    """The shape of a never-assigned variable without init: its dims, unknown ones 0."""
    if t.shape is None:
        raise UnsupportedError("a variable of unknown rank has no zero value")
    return tuple(d if isinstance(d, int) else 0 for d in t.shape)
