"""Shared test helpers: building small ONNX models and running them on ORT and itergraph."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# Every pass pipeline verifies the graph after each pass (`itergraph.passes.pipelines`).
os.environ["ITERGRAPH_VERIFY_PASSES"] = "1"
