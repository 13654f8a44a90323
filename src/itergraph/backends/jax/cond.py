"""Lowering ONNX `If`: a condition known at trace time inlines the chosen branch; otherwise
``lax.cond`` over both branches, which must then produce values of the same shapes and types
(XLA has no other kind of conditional); when they do not, the node falls back to NumPy."""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError, IterationLimitError, where
from ...ir import Graph, Node
from .context import Bailout, CannotLower, Frame, Scope, TooLarge, TraceContext, is_static
from .trace import eval_graph


def _branch(tc: TraceContext, node: Node, g: Graph, scope: Scope, frame: Frame) -> list:
    bs = Scope(tc, parent=scope, frame=frame)
    tc.depth += 1
    tc.enclosing.append(node)
    try:
        return eval_graph(tc, g, bs, g.outputs)
    finally:
        tc.depth -= 1
        tc.enclosing.pop()


def lower_if(tc: TraceContext, node: Node, scope: Scope) -> list:
    import jax
    import jax.numpy as jnp

    c = scope.get(node.inputs[0])
    if c.size != 1:
        raise ExecutionError(f"{where(node)}: condition must hold one element, got "
                             f"{tuple(c.shape)}")
    then_g, else_g = node.attrs["then_branch"], node.attrs["else_branch"]
    n_out = len(node.outputs)
    if is_static(c):
        g = then_g if bool(c.reshape(())) else else_g
        tc.note(node, True, "condition known at compile time: branch inlined")
        res = _branch(tc, node, g, scope, scope.frame)
        if len(res) != n_out:
            raise ExecutionError(f"{where(node)}: branch returned {len(res)} values, the node "
                                 f"has {n_out} outputs")
        return res

    def make(g):
        def f(_):
            frame = Frame()
            vals = _branch(tc, node, g, scope, frame)
            if len(vals) != n_out:
                raise CannotLower(node, f"a branch returns {len(vals)} values for {n_out} "
                                        "outputs")
            for v in vals:
                if not hasattr(v, "shape"):
                    raise CannotLower(node, "a branch returns a sequence or optional value")
            err = frame.err if frame.err is not None else jnp.zeros((), np.int32)
            return [jnp.asarray(v) for v in vals], err

        return f

    pred = jnp.asarray(c).reshape(()).astype(bool)
    try:
        outs, err = jax.lax.cond(pred, make(then_g), make(else_g), None)
    except TypeError as e:
        raise CannotLower(node, "its branches produce values of different shapes or types, "
                                f"which XLA's conditional cannot return ({e})",
                          needs_static=True, values=[node.inputs[0]]) from e
    except CannotLower as e:
        # The branch not taken may not lower for these shapes (silero VAD's 8 kHz branch
        # fed 16 kHz frames); with the condition known, only the taken one is traced.
        raise CannotLower(e.element, e.reason, needs_static=True,
                          values=[node.inputs[0]]) from e
    except ExecutionError as e:
        # Nor trace: a Concat axis beyond a rank only the run shows, in a branch ONNX
        # Runtime never runs; the taken branch, traced alone, raises it if it is that one.
        if isinstance(e, IterationLimitError | TooLarge | Bailout):
            raise
        raise CannotLower(node, f"a branch cannot be traced for these shapes ({e})",
                          needs_static=True, values=[node.inputs[0]]) from e
    tc.merge(scope.frame, err)
    tc.note(node, True, "lax.cond")
    return list(outs)
