"""ONNX index and mask ops -> OpenVINO layers (to be filled)."""

from __future__ import annotations
