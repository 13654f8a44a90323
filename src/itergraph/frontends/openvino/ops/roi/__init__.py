"""Region-of-interest pooling: ``ROIAlign``/``ROIPooling`` read here (ONNX's ``RoiAlign`` and
``MaxRoiPool`` are written beside ``NonMaxSuppression`` in `detection.write`); the PS and rotated
variants both directions."""
