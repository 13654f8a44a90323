"""YUV colour conversions (``NV12toRGB`` ...): read as ONNX arithmetic."""
