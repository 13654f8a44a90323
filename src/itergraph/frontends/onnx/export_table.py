"""The ONNX export table: IR op, domain and version -> exporter.

Exporters have the signature of :func:`.node_export.emit_node`, the default entry that writes
every op without one of its own as one ONNX node of the same op. The canonical loop
(``itergraph`` domain) is lowered to ``Scan`` or ``Loop`` by :mod:`.loop_export`; ``If`` is an
ordinary node whose branches are written as subgraphs. ``Relu``, ``Max``, ``Min`` and ``PRelu``
take another form for the element types ONNX Runtime has no kernel for (:mod:`.kernel_gaps`).
Entries follow `itergraph.registry.OpTable`; a node without a version takes the newest entry.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.graph import Node
from ...ir.traits import OPENVINO_DOMAIN
from ...registry import OpTable
from .kernel_gaps import emit_max_min, emit_prelu, emit_relu, emit_unique
from .loop_export import emit_loop
from .node_export import emit_node
from .openvino_export import emit_fake_quantize, emit_gather_tree

Exporter = Callable[..., None]

EXPORTERS = OpTable("onnx export")
EXPORTERS.add("Loop", emit_loop, since=1, domain="itergraph")
EXPORTERS.add("If", emit_node, since=1)
EXPORTERS.add("Relu", emit_relu, since=1)
EXPORTERS.add("Max", emit_max_min, since=1)
EXPORTERS.add("Min", emit_max_min, since=1)
EXPORTERS.add("PRelu", emit_prelu, since=1)
EXPORTERS.add("Unique", emit_unique, since=11)
EXPORTERS.add("FakeQuantize", emit_fake_quantize, since=1, domain=OPENVINO_DOMAIN)
EXPORTERS.add("GatherTree", emit_gather_tree, since=1, domain=OPENVINO_DOMAIN)


def exporter_for(n: Node) -> Exporter:
    """The exporter of IR node `n` (`emit_node` when none is registered)."""
    return EXPORTERS.lookup(n.op_type, n.version, n.domain) or emit_node
