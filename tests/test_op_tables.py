"""The op tables agree with the traits table: forgetting one entry when adding an op fails here.

Adding an element-wise op touches its trait row (`ir/traits.py`), its NumPy kernel, its JAX
lowering and, when OpenVINO has it under another name, its row in
`frontends/openvino/same_ops.py` (README, "Adding an op").
"""

from __future__ import annotations

import pytest

from itergraph.backends.jax.table import LOWERINGS
from itergraph.backends.jax.table import load_all as load_jax
from itergraph.backends.numpy.kernels import KERNELS
from itergraph.backends.numpy.kernels import load_all as load_numpy
from itergraph.frontends.openvino.export_table import EXPORTERS
from itergraph.frontends.openvino.import_table import IMPORTERS
from itergraph.frontends.openvino.same_ops import SAME_OPS
from itergraph.ir.traits import ELEMENTWISE, Trait, ops_with, traits

load_numpy()
load_jax()
import itergraph.frontends.openvino.reader  # noqa: E402,F401  (registers the importers)
import itergraph.frontends.openvino.writer  # noqa: E402,F401  (registers the exporters)

NATIVE = sorted(ops_with(Trait.UNARY) | ops_with(Trait.BROADCAST) | ops_with(Trait.REDUCTION)
                | ops_with(Trait.CELL) | ops_with(Trait.SHAPE_ONLY))


@pytest.mark.parametrize("op", NATIVE)
def test_numpy_kernel_for_every_elementwise_reduction_cell_and_shape_op(op):
    assert KERNELS.lookup(op) is not None, f"{op} has traits but no NumPy kernel"


@pytest.mark.parametrize("op", NATIVE)
def test_jax_lowering_for_every_elementwise_reduction_cell_and_shape_op(op):
    assert LOWERINGS.lookup(op) is not None, f"{op} has traits but no JAX lowering"


@pytest.mark.parametrize("row", SAME_OPS, ids=lambda r: r.onnx)
def test_same_ops_rows_are_elementwise_and_registered_both_ways(row):
    assert traits(row.onnx) & ELEMENTWISE, f"{row.onnx} has no element-wise trait row"
    assert IMPORTERS.lookup(row.openvino, row.opset) is not None
    assert EXPORTERS.lookup(row.onnx) is not None
