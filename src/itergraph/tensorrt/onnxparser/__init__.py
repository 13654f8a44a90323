"""The TensorRT-style ONNX parser (`OnnxParser`), modelled on onnx-tensorrt's importers: it
reads an ONNX model into a `Network` layer by layer, as TensorRT's parser does."""
