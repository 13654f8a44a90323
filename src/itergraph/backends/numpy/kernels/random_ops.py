"""Random ops of the ``org.openvinotoolkit`` domain: RandomUniform (OpenVINO's Philox, math in
`backends.common.philox`, or with ``alignment="pytorch"`` the Mersenne Twister of
`backends.common.mersenne`) and Multinomial (`backends.common.multinomial`).

A Philox RandomUniform node keeps its generator state in its kernel: each run of the compiled
graph continues the sequence where the previous run left it, as successive ``infer`` calls of
one OpenVINO compiled model do (the Mersenne Twister starts afresh at every run, as there).
Seeds both 0 mean a non-deterministic sequence: the kernel then draws a 64-bit global seed
from the operating system once, when the graph is compiled.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr, attr_str, np_dtype
from ...common.mersenne import random_uniform_mt
from ...common.multinomial import multinomial
from ...common.philox import DOMAIN, next_state, random_uniform
from . import kernel


def _dims(shape: np.ndarray, node) -> tuple[int, ...]:
    dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in dims):
        raise ExecutionError(f"{where(node)}: negative dimension in shape {list(dims)}")
    return dims


@kernel("RandomUniform", domain=DOMAIN)
def _random_uniform(node, ctx):
    alignment = (attr_str(node, "alignment", "tensorflow") or "tensorflow").lower()
    if alignment not in ("tensorflow", "pytorch"):
        raise ModelError(f"{where(node)}: unknown RandomUniform alignment '{alignment}'")
    dtype = np_dtype(attr(node, "output_type"), node)
    key = int(attr(node, "global_seed", 0)) % 2**64
    op_seed = int(attr(node, "op_seed", 0)) % 2**64
    if key == 0 and op_seed == 0:
        key = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    state = [0, op_seed]  # (n0, counter), advanced by every run

    def mt(shape, lo, hi):
        try:
            return random_uniform_mt(_dims(shape, node), lo, hi, dtype, key)
        except ExecutionError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None

    if alignment == "pytorch":
        return mt

    def fn(shape, lo, hi):
        dims = _dims(shape, node)
        try:
            out = random_uniform(dims, lo, hi, dtype, key, state[1], state[0])
        except ExecutionError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None
        state[0], state[1] = next_state(state[0], state[1], out.size)
        return out

    return fn


@kernel("Multinomial", domain=DOMAIN)
def _multinomial(node, ctx):
    dtype = np_dtype(attr(node, "convert_type"), node)
    replace = bool(attr(node, "with_replacement", 0))
    log_probs = bool(attr(node, "log_probs", 0))
    seeds = int(attr(node, "global_seed", 0)), int(attr(node, "op_seed", 0))

    def fn(probs, num_samples):
        n = np.asarray(num_samples).reshape(-1)
        if n.size != 1:
            raise ExecutionError(f"{where(node)}: num_samples must hold one element, has "
                                 f"{n.size}")
        try:
            out = multinomial(np.asarray(probs), int(n[0]), replace, log_probs, *seeds)
        except ExecutionError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None
        return out.astype(dtype)

    return fn
