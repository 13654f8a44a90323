"""TensorRT-style network-definition API: build loops the TensorRT way, run them with itergraph.

Names, call shapes and semantics follow TensorRT 10's Python package, so porting a network
definition is changing ``import tensorrt as trt`` into ``import itergraph.network as trt``::

    network = trt.Builder(trt.Logger()).create_network()
    x = network.add_input("x", trt.float32, (4, 3))
    loop = network.add_loop()
    loop.add_trip_limit(count, trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    ...
    outs = ig.load(network).run({"x": x_value})   # instead of building an engine

``trt.OnnxParser(network, logger)`` imports ONNX models into a network as TensorRT's parser
does. Engines (CUDA) are not built: ``build_serialized_network`` says to run the network with
``ig.load(network).run(...)``.
"""

from .builder import Builder, IBuilderConfig, ILogger, IOptimizationProfile, Logger, Runtime
from .control import (
    ConditionLayer,
    IfConditional,
    IfConditionalBoundaryLayer,
    IfConditionalInputLayer,
    IfConditionalOutputLayer,
    IteratorLayer,
    Loop,
    LoopBoundaryLayer,
    LoopOutputLayer,
    RecurrenceLayer,
    TripLimitLayer,
)
from .core import Layer, Tensor
from .dims import Dims, Dims2, Dims3, Dims4, DimsHW, Permutation, volume
from .enums import (  # every enum class (trt.DataType, trt.TripLimit ...)
    ActivationType,
    AllocatorFlag,
    AttentionNormalizationOp,
    BoundingBoxFormat,
    BuilderFlag,
    CalibrationAlgoType,
    CollectiveOperation,
    CumulativeOperation,
    DataType,
    DeviceType,
    ElementWiseOperation,
    EngineCapability,
    EngineStat,
    ErrorCodeTRT,
    ExecutionContextAllocationStrategy,
    FillOperation,
    GatherMode,
    HardwareCompatibilityLevel,
    InterpolationMode,
    KVCacheMode,
    LayerInformationFormat,
    LayerType,
    LoopOutput,
    MatrixOperation,
    MemoryPoolType,
    MoEActType,
    NetworkDefinitionCreationFlag,
    OptProfileSelector,
    PaddingMode,
    PoolingType,
    PreviewFeature,
    ProfilingVerbosity,
    QuantizationFlag,
    ReduceOperation,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    RuntimePlatform,
    SampleMode,
    ScaleMode,
    ScatterMode,
    SerializationFlag,
    Severity,
    TacticSource,
    TempfileControlFlag,
    TensorFormat,
    TensorIOMode,
    TensorLocation,
    TilingOptimizationLevel,
    TopKOperation,
    TripLimit,
    UnaryOperation,
    WeightsRole,
    bfloat16,
    e8m0,
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
    ConstantLayer,
    ElementWiseLayer,
    IdentityLayer,
    MatrixMultiplyLayer,
    ReduceLayer,
    SelectLayer,
    ShapeLayer,
    SoftMaxLayer,
    UnaryLayer,
)
from .layers_index import (
    CumulativeLayer,
    NonZeroLayer,
    OneHotLayer,
    ReverseSequenceLayer,
    ScatterLayer,
    SqueezeLayer,
    TopKLayer,
    UnsqueezeLayer,
)
from .layers_nn import (
    ConvolutionLayer,
    DeconvolutionLayer,
    DequantizeLayer,
    LRNLayer,
    NormalizationLayer,
    ParametricReLULayer,
    PoolingLayer,
    QuantizeLayer,
    ScaleLayer,
)
from .layers_shape import ConcatenationLayer, GatherLayer, ShuffleLayer, SliceLayer
from .layers_tensor import (
    AssertionLayer,
    EinsumLayer,
    FillLayer,
    GridSampleLayer,
    PaddingLayer,
    ResizeLayer,
)
from .network import INetworkDefinition, Network, Weights
from .onnxparser.parser import ErrorCode, OnnxParser, OnnxParserFlag, ParserError

# TensorRT's interface names (ILoop, ITensor, ...) as aliases.
ILayer, ITensor, ILoop, IIfConditional = Layer, Tensor, Loop, IfConditional
ILoopBoundaryLayer, IIfConditionalBoundaryLayer = LoopBoundaryLayer, IfConditionalBoundaryLayer
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
IFillLayer, IPaddingLayer, IResizeLayer = FillLayer, PaddingLayer, ResizeLayer
IAssertionLayer, IEinsumLayer, IGridSampleLayer = AssertionLayer, EinsumLayer, GridSampleLayer
IScatterLayer, IOneHotLayer, ITopKLayer, INonZeroLayer = (
    ScatterLayer, OneHotLayer, TopKLayer, NonZeroLayer)
IReverseSequenceLayer, ICumulativeLayer = ReverseSequenceLayer, CumulativeLayer
ISqueezeLayer, IUnsqueezeLayer = SqueezeLayer, UnsqueezeLayer
IScaleLayer, INormalizationLayer, IParametricReLULayer = (
    ScaleLayer, NormalizationLayer, ParametricReLULayer)
IConvolutionLayer, IDeconvolutionLayer, IPoolingLayer, ILRNLayer = (
    ConvolutionLayer, DeconvolutionLayer, PoolingLayer, LRNLayer)
IQuantizeLayer, IDequantizeLayer = QuantizeLayer, DequantizeLayer

__all__ = [
    "ActivationLayer", "ActivationType", "AllocatorFlag", "AssertionLayer",
    "AttentionNormalizationOp", "BoundingBoxFormat", "Builder", "BuilderFlag",
    "CalibrationAlgoType", "CastLayer", "CollectiveOperation", "ConcatenationLayer",
    "ConditionLayer", "ConstantLayer", "ConvolutionLayer", "CumulativeLayer",
    "CumulativeOperation", "DataType", "DeconvolutionLayer", "DequantizeLayer", "DeviceType",
    "Dims", "Dims2", "Dims3", "Dims4", "DimsHW", "EinsumLayer", "ElementWiseLayer",
    "ElementWiseOperation", "EngineCapability", "EngineStat", "ErrorCode", "ErrorCodeTRT",
    "ExecutionContextAllocationStrategy", "FillLayer", "FillOperation", "GatherLayer",
    "GatherMode", "GridSampleLayer", "HardwareCompatibilityLevel", "IActivationLayer",
    "IAssertionLayer", "IBuilderConfig", "ICastLayer", "IConcatenationLayer", "IConditionLayer",
    "IConstantLayer", "IConvolutionLayer", "ICumulativeLayer", "IDeconvolutionLayer",
    "IDequantizeLayer", "IEinsumLayer", "IElementWiseLayer", "IFillLayer", "IGatherLayer",
    "IGridSampleLayer", "IIdentityLayer", "IIfConditional", "IIfConditionalBoundaryLayer",
    "IIfConditionalInputLayer", "IIfConditionalOutputLayer", "IIteratorLayer", "ILRNLayer",
    "ILayer", "ILogger", "ILoop", "ILoopBoundaryLayer", "ILoopOutputLayer", "IMatrixMultiplyLayer",
    "INetworkDefinition", "INonZeroLayer", "INormalizationLayer", "IOneHotLayer",
    "IOptimizationProfile", "IPaddingLayer", "IParametricReLULayer", "IPoolingLayer",
    "IQuantizeLayer", "IRecurrenceLayer", "IReduceLayer", "IResizeLayer", "IReverseSequenceLayer",
    "IScaleLayer", "IScatterLayer", "ISelectLayer", "IShapeLayer", "IShuffleLayer", "ISliceLayer",
    "ISoftMaxLayer", "ISqueezeLayer", "ITensor", "ITopKLayer", "ITripLimitLayer", "IUnaryLayer",
    "IUnsqueezeLayer", "IdentityLayer", "IfConditional", "IfConditionalBoundaryLayer",
    "IfConditionalInputLayer", "IfConditionalOutputLayer", "InterpolationMode", "IteratorLayer",
    "KVCacheMode", "LRNLayer", "Layer", "LayerInformationFormat", "LayerType", "Logger", "Loop",
    "LoopBoundaryLayer", "LoopOutput", "LoopOutputLayer", "MatrixMultiplyLayer", "MatrixOperation",
    "MemoryPoolType", "MoEActType", "Network", "NetworkDefinitionCreationFlag", "NonZeroLayer",
    "NormalizationLayer", "OneHotLayer", "OnnxParser", "OnnxParserFlag", "OptProfileSelector",
    "PaddingLayer", "PaddingMode", "ParametricReLULayer", "ParserError", "Permutation",
    "PoolingLayer", "PoolingType", "PreviewFeature", "ProfilingVerbosity", "QuantizationFlag",
    "QuantizeLayer", "RecurrenceLayer", "ReduceLayer", "ReduceOperation",
    "ResizeCoordinateTransformation", "ResizeLayer", "ResizeRoundMode", "ResizeSelector",
    "ReverseSequenceLayer", "Runtime", "RuntimePlatform", "SampleMode", "ScaleLayer", "ScaleMode",
    "ScatterLayer", "ScatterMode", "SelectLayer", "SerializationFlag", "Severity", "ShapeLayer",
    "ShuffleLayer", "SliceLayer", "SoftMaxLayer", "SqueezeLayer", "TacticSource",
    "TempfileControlFlag", "Tensor", "TensorFormat", "TensorIOMode", "TensorLocation",
    "TilingOptimizationLevel", "TopKLayer", "TopKOperation", "TripLimit", "TripLimitLayer",
    "UnaryLayer", "UnaryOperation", "UnsqueezeLayer", "Weights", "WeightsRole", "bfloat16", "bool",
    "e8m0", "float16", "float32", "fp4", "fp8", "int32", "int4", "int64", "int8", "nptype",
    "uint8", "volume",
]
