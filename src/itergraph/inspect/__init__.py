"""Looking inside loops: per-step traces of body tensors (`trace`), the transform that exposes
them to other runtimes (`mark`), and comparisons of engines down to the first divergence
(`compare`). The trace file format is `trace_file`'s."""
