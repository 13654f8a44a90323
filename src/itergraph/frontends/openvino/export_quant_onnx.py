"""ONNX quantization ops -> OpenVINO layers (to be filled)."""

from __future__ import annotations
