"""``FakeQuantize``, ``FakeConvert``, ``GatherTree``, ``Inverse`` and the ONNX quantization ops."""
