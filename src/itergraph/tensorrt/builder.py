"""``Logger``, ``Builder``, ``IBuilderConfig``, ``IOptimizationProfile`` and ``Runtime``.

Building and running TensorRT engines (CUDA) is outside itergraph: the engine-building calls
(``build_serialized_network``, ``build_engine_with_config``, ``Runtime.deserialize_cuda_engine``)
raise `UnsupportedError` naming the alternative, ``ig.load(network).run(feeds)``. Before
raising they check the network and the config's optimization profiles as TensorRT's builder
does, and leave those profiles on the network, where they bound the shapes (and the values of
shape-tensor inputs) that a run accepts. The rest of the configuration (flags, memory pools,
timing caches...) is kept and read back, and changes nothing.
"""

from __future__ import annotations

import sys

from ..errors import ModelError, UnsupportedError
from .core import checked_dims
from .dims import Dims
from .enums import (
    BuilderFlag,
    DeviceType,
    EngineCapability,
    HardwareCompatibilityLevel,
    MemoryPoolType,
    ProfilingVerbosity,
    RuntimePlatform,
    Severity,
    TilingOptimizationLevel,
    check_enum,
)
from .network import Network

_NO_ENGINE = ("itergraph does not build or run TensorRT engines (no CUDA): run the network "
              "with ig.load(network).run(feeds) instead")


class ILogger:
    """TensorRT's logger interface: subclass it and override ``log(severity, msg)``."""

    Severity = Severity

    def log(self, severity, msg: str) -> None:
        pass


for _m in Severity:
    setattr(ILogger, _m.name, _m)


class Logger(ILogger):
    """Prints messages at `min_severity` (WARNING by default) or more severe to stderr, as
    ``[TRT] [W] message``."""

    def __init__(self, min_severity=Severity.WARNING):
        self.min_severity = Severity(int(min_severity))

    def log(self, severity, msg: str) -> None:
        severity = Severity(int(severity))
        if severity <= self.min_severity:
            tag = "FEWIV"[int(severity)]
            print(f"[TRT] [{tag}] {msg}", file=sys.stderr)


class IOptimizationProfile:
    """Shape ranges of the network inputs: ``set_shape(input, min, opt, max)`` for execution
    inputs, ``set_shape_input(input, min, opt, max)`` for the values of shape-tensor inputs.
    Each is checked when set (same ranks, ``min <= opt <= max``, no negative entry)."""

    def __init__(self):
        self._shapes: dict[str, tuple[Dims, Dims, Dims]] = {}
        self._values: dict[str, tuple[tuple[int, ...], ...]] = {}
        self.extra_memory_target = 1.0

    def set_shape(self, input: str, min, opt, max) -> None:  # noqa: A002
        what = f"IOptimizationProfile.set_shape('{input}')"
        dims = [checked_dims(d, what) for d in (min, opt, max)]
        _check_range(dims, what, "shape", nonnegative=True)
        self._shapes[str(input)] = tuple(Dims(d) for d in dims)

    def get_shape(self, input: str) -> list[Dims]:  # noqa: A002
        return list(self._shapes.get(str(input), ()))

    def set_shape_input(self, input: str, min, opt, max) -> None:  # noqa: A002
        what = f"IOptimizationProfile.set_shape_input('{input}')"
        try:
            vals = [tuple(int(v) for v in d) for d in (min, opt, max)]
        except (TypeError, ValueError):
            raise ModelError(f"{what}: values must be integers") from None
        _check_range(vals, what, "values", nonnegative=False)
        self._values[str(input)] = tuple(vals)

    def get_shape_input(self, input: str) -> list[tuple[int, ...]]:  # noqa: A002
        return [list(v) for v in self._values.get(str(input), ())]

    def __bool__(self) -> bool:
        return True

    def check(self, network: Network) -> None:
        """TensorRT's build-time checks of this profile against `network`."""
        names = {t.name: t for t in network.inputs}
        for name in list(self._shapes) + list(self._values):
            if name not in names:
                raise ModelError(f"optimization profile: '{name}' is not an input of the "
                                 "network")
        for t in network.inputs:
            if t.is_shape_tensor:
                if t.name not in self._values:
                    raise ModelError(f"optimization profile: shape-tensor input '{t.name}' "
                                     "needs its values (set_shape_input)")
                n = 1
                for d in t.shape:
                    n *= d
                if any(len(v) != n for v in self._values[t.name]):
                    raise ModelError(f"optimization profile: input '{t.name}' holds {n} "
                                     "values; set_shape_input gave "
                                     f"{[len(v) for v in self._values[t.name]]}")
            if -1 in t.shape and t.name not in self._shapes:
                raise ModelError(f"optimization profile: input '{t.name}' has dynamic shape "
                                 f"{tuple(t.shape)} but no set_shape")
            if t.name in self._shapes:
                for d in self._shapes[t.name]:
                    if len(d) != len(t.shape) or any(
                            s != -1 and s != x for s, x in zip(t.shape, d)):
                        raise ModelError(f"optimization profile: shape {tuple(d)} does not "
                                         f"fit input '{t.name}' {tuple(t.shape)}")


def _check_range(dims, what: str, kind: str, nonnegative: bool) -> None:
    lo, opt, hi = dims
    if not len(lo) == len(opt) == len(hi):
        raise ModelError(f"{what}: min, opt and max {kind}s differ in length")
    for a, b, c in zip(lo, opt, hi):
        if nonnegative and a < 0:
            raise ModelError(f"{what}: a {kind} entry is negative ({tuple(lo)})")
        if not a <= b <= c:
            raise ModelError(f"{what}: needs min <= opt <= max, got {tuple(lo)}, "
                             f"{tuple(opt)}, {tuple(hi)}")


class IBuilderConfig:
    """Builder settings: kept, read back, and without effect on how itergraph runs."""

    def __init__(self):
        self._flags = 0
        self._pools: dict = {}
        self.profiles: list[IOptimizationProfile] = []
        self._preview: dict = {}
        self._device_types: dict[int, DeviceType] = {}
        self.engine_capability = EngineCapability.STANDARD
        self.default_device_type = DeviceType.GPU
        self.DLA_core = -1
        self.profiling_verbosity = ProfilingVerbosity.LAYER_NAMES_ONLY
        self.builder_optimization_level = 3
        self.hardware_compatibility_level = HardwareCompatibilityLevel.NONE
        self.tiling_optimization_level = TilingOptimizationLevel.NONE
        self.runtime_platform = RuntimePlatform.SAME_AS_BUILD
        self.max_aux_streams = -1
        self.max_num_tactics = -1
        self.avg_timing_iterations = 1
        self.l2_limit_for_tiling = -1
        self.int8_calibrator = None
        self.algorithm_selector = None
        self.progress_monitor = None
        self.profile_stream = 0
        self.plugins_to_serialize = []
        self.quantization_flags = 0
        self._timing_cache = None

    @property
    def flags(self) -> int:
        return self._flags

    @flags.setter
    def flags(self, value: int) -> None:
        self._flags = int(value)

    def set_flag(self, flag) -> None:
        self._flags |= 1 << int(check_enum(BuilderFlag, flag, "set_flag"))

    def clear_flag(self, flag) -> None:
        self._flags &= ~(1 << int(check_enum(BuilderFlag, flag, "clear_flag")))

    def get_flag(self, flag) -> bool:
        return bool(self._flags >> int(check_enum(BuilderFlag, flag, "get_flag")) & 1)

    def set_memory_pool_limit(self, pool, pool_size: int) -> None:
        self._pools[check_enum(MemoryPoolType, pool, "set_memory_pool_limit")] = int(pool_size)

    def get_memory_pool_limit(self, pool) -> int:
        return self._pools.get(check_enum(MemoryPoolType, pool, "get_memory_pool_limit"), 0)

    def add_optimization_profile(self, profile: IOptimizationProfile) -> int:
        if not isinstance(profile, IOptimizationProfile):
            raise ModelError("add_optimization_profile: expected an IOptimizationProfile")
        self.profiles.append(profile)
        return len(self.profiles) - 1

    @property
    def num_optimization_profiles(self) -> int:
        return len(self.profiles)

    def set_preview_feature(self, feature, enable: bool) -> None:
        self._preview[int(feature)] = bool(enable)

    def get_preview_feature(self, feature) -> bool:
        return self._preview.get(int(feature), False)

    def set_device_type(self, layer, device_type) -> None:
        self._device_types[id(layer.__dict__)] = device_type

    def get_device_type(self, layer):
        return self._device_types.get(id(layer.__dict__), self.default_device_type)

    def is_device_type_set(self, layer) -> bool:
        return id(layer.__dict__) in self._device_types

    def reset_device_type(self, layer) -> None:
        self._device_types.pop(id(layer.__dict__), None)

    def can_run_on_DLA(self, layer) -> bool:  # noqa: N802 - TensorRT's name
        return False

    def set_tactic_sources(self, tactic_sources: int) -> bool:
        self._tactics = int(tactic_sources)
        return True

    def get_tactic_sources(self) -> int:
        return getattr(self, "_tactics", 0)

    def create_timing_cache(self, serialized_timing_cache: bytes = b""):
        return object()

    def set_timing_cache(self, cache, ignore_mismatch: bool) -> bool:
        self._timing_cache = cache
        return True

    def get_timing_cache(self):
        return self._timing_cache

    def reset(self) -> None:
        self.__init__()


class Builder:
    """``trt.Builder(logger)``: makes networks, configs and optimization profiles."""

    def __init__(self, logger: ILogger | None = None):
        self.logger = logger
        self.max_threads = 1
        self.error_recorder = None
        self.gpu_allocator = None

    platform_has_tf32 = False
    platform_has_fast_fp16 = False
    platform_has_fast_int8 = False
    max_DLA_batch_size = 1
    num_DLA_cores = 0

    def create_network(self, flags: int = 0) -> Network:
        return Network(flags, builder=self)

    def create_builder_config(self) -> IBuilderConfig:
        return IBuilderConfig()

    def create_optimization_profile(self) -> IOptimizationProfile:
        return IOptimizationProfile()

    def _check(self, network: Network, config: IBuilderConfig) -> None:
        network.to_graph()  # every build-time rule
        dynamic = [t.name for t in network.inputs if -1 in t.shape or t.is_shape_tensor]
        if dynamic and not config.profiles:
            raise ModelError("network has dynamic or shape inputs ("
                             + ", ".join(f"'{n}'" for n in dynamic)
                             + ") but no optimization profile has been defined")
        for p in config.profiles:
            p.check(network)
        network.profiles = list(config.profiles)
        network.touch()

    def is_network_supported(self, network: Network, config: IBuilderConfig) -> bool:
        try:
            self._check(network, config)
        except ModelError as e:
            if self.logger is not None:
                self.logger.log(Severity.ERROR, str(e))
            return False
        return True

    def build_serialized_network(self, network: Network, config: IBuilderConfig):
        self._check(network, config)
        raise UnsupportedError(f"build_serialized_network: {_NO_ENGINE}")

    def build_engine_with_config(self, network: Network, config: IBuilderConfig):
        self._check(network, config)
        raise UnsupportedError(f"build_engine_with_config: {_NO_ENGINE}")

    def reset(self) -> None:
        pass


class Runtime:
    """``trt.Runtime(logger)``: deserializing engines is not supported (see the module)."""

    def __init__(self, logger: ILogger | None = None):
        self.logger = logger
        self.DLA_core = -1
        self.num_DLA_cores = 0
        self.gpu_allocator = None
        self.error_recorder = None

    def deserialize_cuda_engine(self, serialized_engine):
        raise UnsupportedError(f"deserialize_cuda_engine: {_NO_ENGINE}")


__all__ = ["Builder", "IBuilderConfig", "ILogger", "IOptimizationProfile", "Logger", "Runtime"]
