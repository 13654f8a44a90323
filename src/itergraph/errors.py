"""The exception hierarchy. Every error itergraph raises on purpose derives from `Error`.

Each error names the model element at fault (node name and type, port, iteration) and what
was expected, so that a user never has to read a traceback from inside a kernel.
"""

from __future__ import annotations

from contextlib import contextmanager


class Error(Exception):
    """Base of every error itergraph raises on purpose."""


class ModelError(Error):
    """The model is malformed: wrong arity, dangling references, inconsistent attributes."""


class UnsupportedError(Error):
    """The model is well formed but uses something this engine (or this writer) cannot handle."""


class InputError(Error):
    """A run was given missing, extra, or ill-typed inputs."""


class ExecutionError(Error):
    """Running a model failed (shape mismatch inside a loop, bad length, ...)."""


class IterationLimitError(ExecutionError):
    """A loop ran past the `max_iterations` limit given to `run`."""


class AttributeSetError(ModelError, AttributeError):
    """An attribute set that the object does not have, or cannot change (the TensorRT-style
    network API: TensorRT's bindings raise `AttributeError` there, so this is one too)."""


class SecurityError(ModelError):
    """The input tried something hostile (XML entity expansion, external entities, ...)."""


class LeniencyWarning(UserWarning):
    """itergraph runs something that a peer engine (ONNX Runtime, OpenVINO) refuses, by a
    documented choice; the message names the element and the choice."""


def where(node) -> str:
    """A short description of a node for error messages: ``Loop node 'name'``, followed by
    the element of the user's file it was translated from when that is not the node itself
    (``meta["element"]``, any object whose ``str`` names it, e.g. an OpenVINO layer's id, name
    and type)."""
    if node is None:
        return "graph"
    name = getattr(node, "name", "") or "<unnamed>"
    element = (getattr(node, "meta", None) or {}).get("element")
    return f"{node.op_type} node '{name}'" + (f" ({element})" if element else "")


#: Exceptions a writer's own code raises on a model it did not foresee (a NumPy broadcast, an
#: index past a list): `writing` names the node; memory and file-system errors pass through.
_WRITER_FAULTS = (ValueError, TypeError, IndexError, KeyError, AttributeError, ArithmeticError,
                  AssertionError)


@contextmanager
def writing(node, writer: str):
    """Run the `writer` ("ONNX", "OpenVINO IR") code that writes `node`: an unforeseen
    exception from it becomes a `ModelError` naming the node, so that ``ig.save`` names the
    element it could not write (an `Error` raised inside passes through as it is)."""
    try:
        yield
    except Error:
        raise
    except _WRITER_FAULTS as e:
        raise ModelError(f"{where(node)}: the {writer} writer failed on this node: "
                         f"{type(e).__name__}: {e}") from e
