"""TensorRT-style network-definition API: build loops the TensorRT way, run them with itergraph.

Names and call shapes follow TensorRT's Python package, so porting a network definition is
changing ``import tensorrt as trt`` into ``import itergraph.network as trt``::

    network = trt.Builder(trt.Logger()).create_network()
    x = network.add_input("x", trt.float32, (4, 3))
    loop = network.add_loop()
    loop.add_trip_limit(count, trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    ...
    graph = network.to_graph()      # an itergraph IR Graph (ig.load(network) does this)
"""

from .control import (
    ConditionLayer,
    IfConditional,
    IfConditionalInputLayer,
    IfConditionalOutputLayer,
    IteratorLayer,
    Loop,
    LoopOutputLayer,
    RecurrenceLayer,
    TripLimitLayer,
)
from .core import Layer, Tensor
from .enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    LayerType,
    LoopOutput,
    MatrixOperation,
    NetworkDefinitionCreationFlag,
    ReduceOperation,
    TripLimit,
    UnaryOperation,
    bfloat16,
    float16,
    float32,
    fp4,
    fp8,
    int4,
    int8,
    int32,
    int64,
    nptype,
    uint8,
)
from .enums import bool as bool  # noqa: PLC0414 - TensorRT exports trt.bool
from .layers import (
    ActivationLayer,
    CastLayer,
    ConcatenationLayer,
    ConstantLayer,
    ElementWiseLayer,
    GatherLayer,
    IdentityLayer,
    MatrixMultiplyLayer,
    ReduceLayer,
    SelectLayer,
    ShapeLayer,
    ShuffleLayer,
    SliceLayer,
    SoftMaxLayer,
    UnaryLayer,
)
from .network import (
    Builder,
    Dims,
    Dims2,
    Dims3,
    Dims4,
    DimsHW,
    INetworkDefinition,
    Logger,
    Network,
    Permutation,
    Weights,
)

# TensorRT's interface names (ILoop, ITensor, ...) as aliases.
ILayer, ITensor, ILoop, IIfConditional = Layer, Tensor, Loop, IfConditional
ITripLimitLayer, IIteratorLayer, IRecurrenceLayer = TripLimitLayer, IteratorLayer, RecurrenceLayer
ILoopOutputLayer, IConditionLayer = LoopOutputLayer, ConditionLayer
IIfConditionalInputLayer, IIfConditionalOutputLayer = (
    IfConditionalInputLayer, IfConditionalOutputLayer)
IConstantLayer, IElementWiseLayer = ConstantLayer, ElementWiseLayer
IActivationLayer = ActivationLayer
IUnaryLayer, IMatrixMultiplyLayer, IReduceLayer = UnaryLayer, MatrixMultiplyLayer, ReduceLayer
IShuffleLayer, IConcatenationLayer, ISliceLayer = ShuffleLayer, ConcatenationLayer, SliceLayer
IGatherLayer, IIdentityLayer, ICastLayer = GatherLayer, IdentityLayer, CastLayer
ISelectLayer, IShapeLayer, ISoftMaxLayer = SelectLayer, ShapeLayer, SoftMaxLayer

__all__ = [
    "ActivationLayer", "ActivationType", "Builder", "Dims", "Dims2", "Dims3", "Dims4", "DimsHW",
    "Permutation", "CastLayer", "ConcatenationLayer",
    "ConditionLayer", "ConstantLayer", "DataType", "ElementWiseLayer", "ElementWiseOperation",
    "GatherLayer", "IActivationLayer", "ICastLayer", "IConcatenationLayer", "IConditionLayer",
    "IConstantLayer", "IElementWiseLayer", "IGatherLayer", "IIdentityLayer", "IIfConditional",
    "IIfConditionalInputLayer", "IIfConditionalOutputLayer", "IIteratorLayer", "ILayer",
    "ILoop", "ILoopOutputLayer", "IMatrixMultiplyLayer", "INetworkDefinition",
    "IRecurrenceLayer", "IReduceLayer", "ISelectLayer", "IShapeLayer", "IShuffleLayer",
    "ISliceLayer", "ISoftMaxLayer", "ITensor", "ITripLimitLayer", "IUnaryLayer",
    "IdentityLayer", "IfConditional", "IfConditionalInputLayer", "IfConditionalOutputLayer",
    "IteratorLayer", "Layer", "LayerType", "Logger", "Loop", "LoopOutput", "LoopOutputLayer",
    "MatrixMultiplyLayer", "MatrixOperation", "Network", "NetworkDefinitionCreationFlag",
    "RecurrenceLayer", "ReduceLayer", "ReduceOperation", "SelectLayer", "ShapeLayer",
    "ShuffleLayer", "SliceLayer", "SoftMaxLayer", "Tensor", "TripLimit", "TripLimitLayer",
    "UnaryLayer", "UnaryOperation", "Weights", "bfloat16", "bool", "float16", "float32", "fp4",
    "fp8", "int32", "int4", "int64", "int8", "nptype", "uint8",
]
