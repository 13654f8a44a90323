"""``ScaledDotProductAttention``: read as ONNX ops."""
