"""The ONNX import table: op, domain and opset version -> importer.

Importers have the signature of :func:`.node_import.import_node`, the default entry that reads
every op without one of its own as one IR node of the same op. ``Loop`` and ``Scan`` become the
canonical `itergraph.ir.Loop`; ``If`` is an ordinary node whose branches are IR subgraphs.
Entries follow `itergraph.registry.OpTable`: one registered ``since=9`` serves opsets 9 and up
until the op's next entry.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir.graph import Node
from ...registry import OpTable
from .legacy_import import import_constant_fill
from .loop_import import import_loop
from .node_import import import_node
from .scan_import import import_scan, import_scan8, scan_before_8

Importer = Callable[..., Node]

IMPORTERS = OpTable("onnx import")
IMPORTERS.add("Loop", import_loop, since=1)
IMPORTERS.add("Scan", scan_before_8, since=1)
IMPORTERS.add("Scan", import_scan8, since=8)
IMPORTERS.add("Scan", import_scan, since=9)
IMPORTERS.add("If", import_node, since=1)
IMPORTERS.add("ConstantFill", import_constant_fill, since=1)


def importer_for(op: str, version: int, domain: str = "") -> Importer:
    """The importer of `op` in `domain` at opset `version` (`import_node` when none is
    registered)."""
    return IMPORTERS.lookup(op, version, domain) or import_node
