"""The ONNX import and export tables: control flow has entries like any other op."""

from __future__ import annotations

import pytest

from itergraph.frontends.onnx.export_table import exporter_for
from itergraph.frontends.onnx.import_table import importer_for
from itergraph.frontends.onnx.loop_export import emit_loop
from itergraph.frontends.onnx.loop_import import import_loop
from itergraph.frontends.onnx.node_export import emit_node
from itergraph.frontends.onnx.node_import import import_node
from itergraph.frontends.onnx.scan_import import import_scan, import_scan8, scan_before_8
from itergraph.ir import Graph, Loop, Node


@pytest.mark.parametrize("op,version,domain,want", [
    ("Loop", 1, "", import_loop), ("Loop", 21, "", import_loop),
    ("Scan", 7, "", scan_before_8), ("Scan", 8, "", import_scan8), ("Scan", 9, "", import_scan),
    ("Scan", 21, "", import_scan), ("If", 13, "", import_node), ("Add", 13, "", import_node),
    ("Loop", 1, "com.example", import_node),
])
def test_importer_for(op, version, domain, want):
    assert importer_for(op, version, domain) is want


def test_exporter_for():
    assert exporter_for(Loop(Graph("b"))) is emit_loop
    assert exporter_for(Node("If", version=13)) is emit_node
    assert exporter_for(Node("Add")) is emit_node
    assert exporter_for(Node("Loop", version=13)) is emit_node  # ONNX Loop, not the canonical one
