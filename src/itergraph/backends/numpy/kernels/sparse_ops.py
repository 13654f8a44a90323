"""Kernel of the ``org.openvinotoolkit`` ``SparseFillEmptyRows`` (math in
`backends.common.sparse_fill`)."""

from __future__ import annotations

from ...common.sparse_fill import DOMAIN, sparse_fill_empty_rows
from . import kernel


@kernel("SparseFillEmptyRows", domain=DOMAIN)
def _sparse_fill_empty_rows(node, ctx):
    return lambda values, shape, indices, default: list(
        sparse_fill_empty_rows(values, shape, indices, default))
