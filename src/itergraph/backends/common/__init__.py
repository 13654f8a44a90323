"""What both backends share: attribute readers, ONNX index arithmetic, recurrent cells."""
