"""One step of a stateful model, as the inspection tools run it.

A model with variables (OpenVINO ``ReadValue``/``Assign``, `ir.state`) has no NumPy kernel
for its state nodes: what `Model.run` executes is the step graph of
`passes.state_io.step_graph`, fed the values the variables hold. The inspection tools
(`trace`, `compare`, `profile`) run that same step graph with the values the model holds when
they are called (``Model.query_state()``; a freshly loaded model holds none, so its first
step reads each variable's init value), and they do not store the values it assigns: an
inspection never advances the model's state, as reading an OpenVINO ``InferRequest``'s state
does not.

The step graph's outputs are the model's own, then ``<variable id>/next`` for each assigned
variable: the value the step would store.
"""

from __future__ import annotations

from typing import Any

from ..feeds import check_feeds
from ..ir.graph import Graph
from ..ir.state import has_state
from ..passes.state_io import StatePorts, step_graph


def held_state(model) -> dict[str, Any]:
    """The values `model` (an `itergraph.Model`) holds, ``{}`` for a model without state."""
    return model.query_state() if has_state(model.graph) else {}


def one_step(graph: Graph, feeds: dict[str, Any], held: dict[str, Any] | None
             ) -> tuple[Graph, dict[str, Any], StatePorts | None]:
    """The graph to run and its feeds: `graph` and `feeds` themselves without state;
    otherwise the step graph reading `held` (``{variable id: value}``) and `feeds` plus those
    values on the step graph's state inputs. Neither `graph` nor `held` is changed."""
    if not has_state(graph):
        return graph, feeds, None
    feeds = check_feeds(graph, feeds)  # the user's feeds name the model's own inputs only
    held = dict(held or {})
    step, ports = step_graph(graph, frozenset(held))
    fed = dict(feeds)
    for vid, value in held.items():
        fed[ports.inputs[vid]] = value
    return step, fed, ports
