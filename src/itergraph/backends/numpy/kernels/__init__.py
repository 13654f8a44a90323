"""NumPy kernels, one table for the whole backend.

A kernel is registered as a *factory*: ``factory(node, ctx) -> fn``. The factory runs once
when a graph is compiled (read attributes, precompute constants, compile subgraphs through
``ctx.compile(graph)``); ``fn(*inputs)`` runs at every execution with the node's inputs as
positional arguments (``None`` for an omitted optional input). ``fn`` returns the output
itself when the node has exactly one output, else a tuple/list with one entry per output.

Tensors are ``numpy.ndarray`` (0-d arrays for scalars, never NumPy scalars), sequences are
Python lists of arrays, an empty optional is ``None``.
"""

from ....registry import OpTable

KERNELS = OpTable("numpy kernel")
kernel = KERNELS.register


def load_all() -> None:
    """Import every kernel module so that each registers its ops (idempotent)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
