"""Every consumer of the canonical `Loop` decides about every one of its flags.

The flags come from `Loop`'s signature (`ir.loop.loop_flags`), so adding one makes this test
fail until each consumer declares it in ``HANDLES_LOOP_FLAGS`` (and reads it) or in
``IGNORES_LOOP_FLAGS`` with the reason it does not change what the consumer does.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest

from itergraph.ir.loop import loop_flags

#: The consumers of `Loop`: the modules declaring what each handles.
CONSUMERS = [
    "itergraph.backends.numpy.kernels.loop",
    "itergraph.backends.jax.loops",
    "itergraph.frontends.onnx.loop_export",
    "itergraph.frontends.openvino.ops.loops.write",
    "itergraph.ir.clone",
    "itergraph.ir.verifier",
]


def _module(name: str):
    if ".jax." in name:
        pytest.importorskip("jax")
    return importlib.import_module(name)


def test_the_flags_are_read_from_the_signature():
    assert {"negative_trip_count", "strict_slices", "equal_slices"} <= loop_flags()
    assert not loop_flags() & {"trip_count", "condition_param", "name", "origin"}


@pytest.mark.parametrize("name", CONSUMERS)
def test_every_flag_is_declared(name):
    mod = _module(name)
    handles = mod.HANDLES_LOOP_FLAGS
    ignores = mod.IGNORES_LOOP_FLAGS
    assert not handles & set(ignores), f"{name}: a flag both handled and ignored"
    missing = loop_flags() - handles - set(ignores)
    assert not missing, f"{name} does not say whether it handles {sorted(missing)}"
    assert not (handles | set(ignores)) - loop_flags(), f"{name} declares unknown flags"
    assert all(isinstance(why, str) and why for why in ignores.values()), \
        f"{name}: an ignored flag without a reason"


def _sources(mod) -> set[Path]:
    """The files of `mod`'s folder, and those defining the itergraph functions and classes
    those files import (a flag may be handled by a shared helper)."""
    folder = Path(inspect.getfile(mod)).parent
    files = set(folder.glob("*.py"))
    prefix = mod.__name__ if mod.__file__.endswith("__init__.py") else \
        mod.__name__.rpartition(".")[0]
    for path in files:
        if path.stem != "__init__":
            importlib.import_module(f"{prefix}.{path.stem}")
    for name, m in list(sys.modules.items()):
        if m is None or not name.startswith(prefix):
            continue
        for obj in vars(m).values():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and \
                    getattr(obj, "__module__", "").startswith("itergraph."):
                files.add(Path(inspect.getfile(obj)))
    return files


def _attributes_read(files: set[Path]) -> set[str]:
    out = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                out.add(node.attr)
    return out


@pytest.mark.parametrize("name", CONSUMERS)
def test_a_handled_flag_is_read(name):
    """A consumer that says it handles a flag reads it (in its folder, or in a helper it
    imports)."""
    mod = _module(name)
    unread = mod.HANDLES_LOOP_FLAGS - _attributes_read(_sources(mod))
    assert not unread, f"{name} declares {sorted(unread)} handled but never reads them"
