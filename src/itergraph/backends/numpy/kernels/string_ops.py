"""String-tensor kernels of the ``org.openvinotoolkit`` domain: StringTensorUnpack and
StringTensorPack (math in `backends.common.string_tensors`). XLA holds no strings: the JAX
backend runs these on NumPy."""

from __future__ import annotations

from ....errors import ExecutionError, where
from ...common.string_tensors import DOMAIN, pack, unpack
from . import kernel


def _located(node, fn):
    def run(*args):
        try:
            return fn(*args)
        except ExecutionError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None

    return run


@kernel("StringTensorUnpack", domain=DOMAIN)
def _unpack(node, ctx):
    return _located(node, unpack)


@kernel("StringTensorPack", domain=DOMAIN)
def _pack(node, ctx):
    return _located(node, pack)
