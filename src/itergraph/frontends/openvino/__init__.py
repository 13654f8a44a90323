"""OpenVINO IR (``.xml`` + ``.bin``, versions 10 and 11) <-> IR.

``read(xml, bin=None) -> Graph`` imports a model (TensorIterator and Loop become the
canonical `Loop`, every other op ONNX-standard nodes); ``write(graph, xml_path, bin_path=None)``
exports a graph as IR v11 that OpenVINO reads and runs with the same results.
"""

from .reader import read

__all__ = ["read", "write"]


def write(graph, xml_path, bin_path=None):
    """Write `graph` as OpenVINO IR v11 (see `writer.write`)."""
    from .writer import write as _write

    return _write(graph, xml_path, bin_path)
