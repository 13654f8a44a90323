"""Element-wise, reduction, activation and matrix ops, both directions (most through the
`same_ops` table), and the ONNX ops OpenVINO writes as small compositions (masks, windows)."""
