"""The ONNX backend API (``onnx.backend.base``), as ``onnxruntime.backend`` offers it.

    import itergraph.onnx_backend as backend
    rep = backend.prepare(model_proto)           # or a path / bytes
    outputs = rep.run([x, y])                    # positional, in graph-input order
    outputs = rep.run({"x": x, "y": y})          # or by name
    outputs[0], outputs["z"]                     # a tuple, also indexable by output name

Positional inputs bind to the graph inputs that are not initializers, in order. Outputs come
back in graph-output order: tensors as ``numpy.ndarray``, sequences as lists, an empty
optional as ``None``. Only the ``"CPU"`` device exists. Keyword options of `prepare`:
``backend`` (``"numpy"`` (default), ``"jax"`` or ``"auto"``) and ``max_iterations`` (a bound
on every loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, namedtupledict
from onnx.backend.base import BackendRep as _OnnxBackendRep

from .errors import InputError, UnsupportedError
from .frontends.onnx.node_import import DEFAULT_DOMAINS


class BackendRep(_OnnxBackendRep):
    """A prepared model: ``run(inputs)`` as many times as needed."""

    def __init__(self, model, backend: str = "numpy", max_iterations: int | None = None):
        self.model = model
        self.backend = backend
        self.max_iterations = max_iterations
        self.input_names = [v.name for v in model.inputs]
        self.output_names = [v.name for v in model.outputs]
        self._outputs_type = namedtupledict("Outputs", self.output_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        """Run on `inputs` (list/tuple in input order, dict by name, or one array)."""
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) > len(self.input_names):
                raise InputError(
                    f"got {len(inputs)} inputs, the model takes {len(self.input_names)}: "
                    f"{self.input_names}"
                )
            feeds = dict(zip(self.input_names, inputs))
        else:
            if len(self.input_names) != 1:
                raise InputError(
                    f"a single input was given, the model takes {len(self.input_names)}: "
                    f"{self.input_names}"
                )
            feeds = {self.input_names[0]: inputs}
        outs = self.model.run(
            feeds,
            backend=kwargs.get("backend", self.backend),
            max_iterations=kwargs.get("max_iterations", self.max_iterations),
        )
        values = list(outs.values())
        if len(values) != len(self.output_names):  # repeated output names collapse in a dict
            values = [outs[n] for n in self.output_names]
        return self._outputs_type(*values)


class ItergraphBackend(Backend):
    """``onnx.backend.base.Backend`` implemented by itergraph."""

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs: Any) -> bool:
        try:
            cls.prepare(model, device, **kwargs)
        except UnsupportedError:
            return False
        return True

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs: Any) -> BackendRep:
        """Load `model` (``ModelProto``, path, bytes, or anything `itergraph.load` takes)."""
        if not cls.supports_device(device):
            raise UnsupportedError(f"device '{device}' is not supported: itergraph runs on CPU")
        from .model import load

        return BackendRep(
            load(model),
            backend=kwargs.get("backend", "numpy"),
            max_iterations=kwargs.get("max_iterations"),
        )

    @classmethod
    def run_model(cls, model, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info=None, **kwargs: Any) -> tuple:
        """Run one node: `inputs` are positional (the node's non-empty inputs) or by name."""
        names = [n for n in node.input if n]
        if isinstance(inputs, dict):
            missing = [n for n in names if n not in inputs]
            if missing:
                raise InputError(f"node {node.op_type}: no value given for input(s) {missing}")
            values = [inputs[n] for n in names]
        else:
            values = list(inputs)
        if len(values) != len(names):
            raise InputError(f"node {node.op_type} takes {len(names)} inputs, got {len(values)}")
        model = _one_node_model(node, names, values, outputs_info, kwargs.get("opset_version"))
        return cls.prepare(model, device, **kwargs).run(values)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return str(device).upper().split(":")[0] == "CPU"


def _value_info(name: str, value: Any) -> onnx.ValueInfoProto:
    from onnx import helper

    return onnx.ValueInfoProto(name=name, type=_type_of(value)) if value is not None else \
        helper.make_empty_tensor_value_info(name)


def _type_of(value: Any) -> onnx.TypeProto:
    from onnx import helper

    if isinstance(value, list):
        elem = _type_of(value[0]) if value else helper.make_tensor_type_proto(
            onnx.TensorProto.FLOAT, None)
        return helper.make_sequence_type_proto(elem)
    a = np.asarray(value)
    elem = onnx.TensorProto.STRING if a.dtype.kind in "OUS" else \
        helper.np_dtype_to_tensor_dtype(a.dtype)
    return helper.make_tensor_type_proto(elem, list(a.shape))


def _one_node_model(node, names, values, outputs_info, opset_version) -> onnx.ModelProto:
    from onnx import helper

    outputs = []
    for i, n in enumerate(o for o in node.output if o):
        if outputs_info is not None and i < len(outputs_info):
            dtype, shape = outputs_info[i]
            outputs.append(helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)))
        else:
            outputs.append(helper.make_empty_tensor_value_info(n))
    graph = helper.make_graph(
        [node], f"run_node_{node.op_type}", [_value_info(n, v) for n, v in zip(names, values)],
        outputs)
    version = int(opset_version or onnx.defs.onnx_opset_version())
    opsets = [helper.make_opsetid("", version)]
    if node.domain not in DEFAULT_DOMAINS:
        opsets.append(helper.make_opsetid(node.domain, 1))
    return helper.make_model(graph, opset_imports=opsets)


prepare = ItergraphBackend.prepare
run_model = ItergraphBackend.run_model
run_node = ItergraphBackend.run_node
supports_device = ItergraphBackend.supports_device
is_compatible = ItergraphBackend.is_compatible

__all__ = [
    "BackendRep", "ItergraphBackend", "is_compatible", "prepare", "run_model", "run_node",
    "supports_device",
]
