"""Embedding bags: read as ONNX ops."""
