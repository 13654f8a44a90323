"""itergraph: one engine for the loops of neural-network graphs.

    import itergraph as ig
    m = ig.load("model.onnx")          # .onnx, .xml (+ .bin), onnx.ModelProto, ig.Graph, Network
    outs = m.run({"X": x})             # name -> ndarray / list / None, in the graph's output order
    ig.save(m, "model.xml")
"""

from .errors import (
    Error,
    ExecutionError,
    InputError,
    IterationLimitError,
    LeniencyWarning,
    ModelError,
    SecurityError,
    UnsupportedError,
)
from .ir import Graph

__version__ = "0.1.0"

__all__ = [
    "Error", "ExecutionError", "Graph", "InputError", "IterationLimitError", "LeniencyWarning",
    "Model", "ModelError", "SecurityError", "UnsupportedError", "check", "compare", "load",
    "optimize", "save",
]


#: Public names defined in modules that pull in the frontends or backends: imported on
#: first use, so that ``import itergraph.ir`` stays light.
_LAZY = {"load": "api", "save": "api", "Model": "api", "check": "portability",
         "compare": "inspect.compare", "optimize": "targeting"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(name)


def __dir__():
    return sorted(set(globals()) | set(__all__))


def _register_onnx_reference_fallback() -> None:
    """Ops of the ONNX domains with no NumPy kernel run through ``onnx.reference``.

    The runner is a service of the ONNX frontend, registered here as the NumPy kernels'
    default so that the backend imports no frontend; it is imported on first use, so that
    ``import itergraph`` does not load onnx.
    """
    from .backends.numpy.kernels import set_default_factory

    def onnx_reference(node, ctx):
        from .frontends.onnx.reference_fallback import fallback_factory

        return fallback_factory(node, ctx)

    set_default_factory(onnx_reference, ("", "ai.onnx.ml", "ai.onnx.preview",
                                         "ai.onnx.preview.training"))


_register_onnx_reference_fallback()


def _register_constant_kernels() -> None:
    """`ir.static_values` computes constants with the NumPy kernels: the IR imports no
    backend, so the runner is injected here (the backend is imported on first use)."""
    from .ir.static_values import set_kernel_runner

    def run_numpy_kernel(node, args):
        from .backends.numpy.plan import run_once

        return run_once(node, args)

    set_kernel_runner(run_numpy_kernel)


def _register_schema_defaults() -> None:
    """`ir.defaults` reads attribute defaults from ONNX's schemas, which the IR cannot import:
    the ONNX frontend's reader is injected here (onnx is imported on first use)."""
    from .ir.defaults import set_schema_defaults

    def onnx_schema_defaults(domain, op_type, version):
        from .frontends.onnx.schema_defaults import schema_defaults

        return schema_defaults(domain, op_type, version)

    set_schema_defaults(onnx_schema_defaults)


_register_constant_kernels()
_register_schema_defaults()
