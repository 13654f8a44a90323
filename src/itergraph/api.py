"""The public surface: `load`, `save`, `Model` (`itergraph.model`) and the names users
reach through ``itergraph`` (`BACKENDS`, `Error`)."""

from __future__ import annotations

from .errors import Error
from .model import Model, load, save
from .session import BACKENDS

__all__ = ["BACKENDS", "Error", "Model", "load", "save"]
