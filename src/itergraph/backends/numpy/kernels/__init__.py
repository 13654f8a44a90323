"""NumPy kernels, one table for the whole backend.

A kernel is registered as a *factory*: ``factory(node, ctx) -> fn``. The factory runs once
when a graph is compiled (read attributes, precompute constants, compile subgraphs through
``ctx.compile(graph)``); ``fn(*inputs)`` runs at every execution with the node's inputs as
positional arguments (``None`` for an omitted optional input). ``fn`` returns the output
itself when the node has exactly one output, else a tuple/list with one entry per output.

Tensors are ``numpy.ndarray`` (0-d arrays for scalars, never NumPy scalars), sequences are
Python lists of arrays, an empty optional is ``None``.

Ops of some domains may have a *default factory*, used when the table has no entry for them
(`set_default_factory`). The backend registers none itself: `itergraph` registers the ONNX
frontend's ``onnx.reference`` runner for the ONNX domains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ....registry import OpTable

KERNELS = OpTable("numpy kernel")
kernel = KERNELS.register

_defaults: dict[str, Callable] = {}


def set_default_factory(factory: Callable | None, domains: Iterable[str]) -> None:
    """Use `factory` for every op of `domains` that has no kernel in the table (``None``: no
    default, such ops are unsupported as those of any other domain)."""
    for domain in domains:
        if factory is None:
            _defaults.pop(domain, None)
        else:
            _defaults[domain] = factory


def default_factory(domain: str) -> Callable | None:
    """The default factory of `domain` (`set_default_factory`), for a kernel that hands the
    cases it does not compute itself to it."""
    return _defaults.get(domain)


def factory_for(op_type: str, version: int | None, domain: str = "") -> Callable | None:
    """The kernel factory of an op: its table entry, else its domain's default, else ``None``."""
    load_all()
    factory = KERNELS.lookup(op_type, version, domain)
    return factory if factory is not None else _defaults.get(domain)


_loaded = False


def load_all() -> None:
    """Import every kernel module so that each registers its ops (idempotent; once done,
    free: it runs for every kernel made)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
