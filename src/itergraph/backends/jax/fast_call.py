"""The prepared call: a run that is one compiled step, called without the planner.

Most models people deploy are, for a given input signature, one XLA program: every node
lowers, every If's condition is known (or a ``lax.cond``), no loop needs the Python driver.
For such a signature, after a first run through the planner has compiled it, `FastCall`
holds what a call needs and nothing more: the executable (`jit_step.JitStep.compiled`), the
feed names in argument order, and where each output comes from. A call is then

    outs = executable(*[feeds[n] for n in arg_names], *big_constants, max_iterations)
    return {name: np.array(outs[i]) ...}            # or a value known while tracing

(the iteration limit only where the program holds a loop; an error code comes back too
where the program can flag one).

entered under the 64-bit context only when an argument is 64-bit (the context costs a tenth
of a small call). A run whose error flag is set is not answered here: `__call__` returns
None and the caller redoes it through the planner, which raises the model's own error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import config


def signature(feeds: dict[str, Any], names: tuple[str, ...], promoted: tuple[str, ...],
              max_iterations: int | None) -> tuple | None:
    """The key of a call: shapes and dtypes of the feeds (values of the promoted ones), or
    None when a feed is not a host array (a sequence, None, a device array)."""
    key: list = [max_iterations]
    for n in names:
        x = feeds.get(n)
        if type(x) is not np.ndarray:
            if x is None and n not in feeds:
                key.append(None)  # an initializer input left to its default
                continue
            return None
        key.append((x.shape, x.dtype))
    for n in promoted:
        x = feeds.get(n)
        if type(x) is not np.ndarray:
            return None  # a promoted input left to its default: the planner's path
        key.append(x.tobytes())
    return tuple(key)


def _wide(dtype: np.dtype) -> bool:
    """Does JAX narrow this type outside its 64-bit mode?"""
    return (dtype.itemsize == 8 and dtype.kind in "iuf") or (
        dtype.kind == "c" and dtype.itemsize == 16)


class FastCall:
    """One input signature's run as a single call of a compiled executable."""

    __slots__ = ("compiled", "arg_names", "extra", "x64", "check", "outputs", "traced_names")

    def __init__(self, step, arg_names: list[str], outputs: list[tuple[str, str, Any]],
                 max_it_arg):
        self.compiled = step.compiled
        self.arg_names = arg_names
        self.extra = (*step.big_args, max_it_arg) if step.uses_limit else tuple(step.big_args)
        self.check = step.checks
        self.outputs = outputs  # (output name, "traced" | "known" | "feed", index/value/name)
        self.x64 = False
        # every output computed, in result order: the common case, converted in one pass
        self.traced_names = (tuple(name for name, _, _ in outputs)
                             if [(k, w) for _, k, w in outputs]
                             == [("traced", i) for i in range(len(outputs))] else None)

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any] | None:
        args = [feeds[n] for n in self.arg_names]
        try:
            if self.x64:
                with config.x64():
                    outs = self.compiled(*args, *self.extra)
            else:
                outs = self.compiled(*args, *self.extra)
            if self.check:
                outs, err = outs
                if np.asarray(err):  # read through the buffer protocol: int(err) costs more
                    return None
        except Exception:  # out of memory and the like: the planner's run words it
            return None
        if self.traced_names is not None:
            return dict(zip(self.traced_names, map(np.array, outs)))
        out: dict[str, Any] = {}
        for name, kind, what in self.outputs:
            if kind == "traced":
                out[name] = np.array(outs[what])
            elif kind == "known":
                out[name] = np.array(what)
            else:
                out[name] = feeds[what]
        return out


def build(cg, feeds: dict[str, Any], max_iterations: int | None) -> FastCall | None:
    """A `FastCall` for the signature of `feeds`, from the plan the last run of `cg` used;
    None when that run was more than one compiled step."""
    from .jit_step import JitStep

    plan = cg.root.last_plan
    if plan is None or plan.tail is not None or len(plan.steps) != 1:
        return None
    step = plan.steps[0]
    if not isinstance(step, JitStep) or step.compiled is None:
        return None
    name_of = {uid: name for name, uid, _ in cg.input_specs}
    arg_names = [name_of.get(u) for u in step.traced_in]
    if any(n is None or type(feeds.get(n)) is not np.ndarray for n in arg_names):
        return None
    traced = {u: i for i, u in enumerate(step.traced_out)}
    outputs: list[tuple[str, str, Any]] = []
    for v in cg.graph.outputs:
        if v.uid in traced:
            outputs.append((v.name, "traced", traced[v.uid]))
        elif v.uid in step.static_out:
            outputs.append((v.name, "known", step.static_out[v.uid]))
        elif v.uid in name_of and type(feeds.get(name_of[v.uid])) is np.ndarray:
            outputs.append((v.name, "feed", name_of[v.uid]))
        elif v.const is not None and v.producer is None and isinstance(v.const, np.ndarray):
            outputs.append((v.name, "known", v.const))
        else:
            return None
    fast = FastCall(step, arg_names, outputs, cg.max_it_arg(max_iterations))
    fast.x64 = any(_wide(feeds[n].dtype) for n in arg_names)
    return fast
