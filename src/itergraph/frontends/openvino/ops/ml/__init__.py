"""``ai.onnx.ml`` ops (linear models, encoders, SVMs, tree ensembles) written as standard
OpenVINO layers."""
