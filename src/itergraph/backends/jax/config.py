"""Importing JAX lazily, 64-bit types without touching global state, the compilation cache.

**x64.** ONNX models use float64 and int64; JAX computes in 32 bits unless ``jax_enable_x64``
is set. Flipping that flag globally would change the behaviour of every other user of JAX in
the process, so this backend never does: it enters ``jax.enable_x64(True)`` (a thread-local
configuration context) around each trace and each call of its compiled functions, via
`x64()`. Arrays leave the backend as NumPy arrays, so no 64-bit JAX array escapes into code
that runs without the flag.

**Synchronous CPU dispatch.** JAX runs a CPU program on a worker thread by default (async
dispatch) unless XLA deems it trivial; this backend converts every result to NumPy right
away, so the caller only waits on the hand-off: measured 70 to 120 us per call of a program
holding a dot or a loop on a loaded 2-core machine (an LSTM operator of 8 steps: 220 -> 110
us). The first import through `jax()` sets JAX's process-wide ``jax_cpu_enable_async_dispatch``
to False, which takes effect only where the CPU client is not yet created (a process that
used JAX first keeps its dispatch) and also makes other JAX CPU code in the process run
inline. ``ITERGRAPH_JAX_ASYNC_DISPATCH=1`` leaves JAX's setting alone.

**XLA options**: `jit` compiles with `compiler_options()` (512-bit vectors on AVX-512 CPUs).

**Persistent compilation cache** (opt-in): `enable_compilation_cache(path)`, or the
environment variable ``ITERGRAPH_JAX_CACHE_DIR`` read the first time this backend compiles
something. It sets JAX's global ``jax_compilation_cache_dir`` (the cache is keyed by the
compiled program, so it is safe to share with other JAX users).
"""

from __future__ import annotations

import os

_jax = None
_cache_checked = False
ENV_CACHE_DIR = "ITERGRAPH_JAX_CACHE_DIR"
ENV_XLA_OPTIONS = "ITERGRAPH_XLA_OPTIONS"
ENV_ASYNC_DISPATCH = "ITERGRAPH_JAX_ASYNC_DISPATCH"


def available() -> bool:
    """True when JAX can be imported."""
    try:
        jax()
    except ImportError:
        return False
    return True


def jax():
    """The `jax` module (imported on first use)."""
    global _jax
    if _jax is None:
        import jax as _j

        _jax = _j
        if os.environ.get(ENV_ASYNC_DISPATCH, "") in ("", "0"):
            _j.config.update("jax_cpu_enable_async_dispatch", False)
        _check_cache_env()
    return _jax


def x64():
    """A context manager under which JAX uses 64-bit types (thread-local, restores on exit)."""
    return jax().enable_x64(True)


def enable_compilation_cache(path: str | os.PathLike, min_compile_time_s: float = 0.0) -> None:
    """Persist compiled XLA programs in `path` so that later processes skip compilation."""
    j = jax()
    os.makedirs(path, exist_ok=True)
    j.config.update("jax_compilation_cache_dir", os.fspath(path))
    j.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_s))
    try:
        j.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    except AttributeError:  # pragma: no cover - older JAX
        pass


def _check_cache_env() -> None:
    global _cache_checked
    if _cache_checked:
        return
    _cache_checked = True
    path = os.environ.get(ENV_CACHE_DIR)
    if path:
        enable_compilation_cache(path)


# ----------------------------------------------------------------------------- XLA options

_options: dict | None = None


def _host_has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return " avx512f " in f" {line.split(':', 1)[1].strip()} "
    except OSError:
        pass
    return False


def compiler_options() -> dict:
    """XLA options for this backend's programs on the CPU.

    On a CPU with AVX-512, XLA is asked for 512-bit vectors (its default prefers 256 bits):
    element-wise code with transcendental functions (tanh, exp, sigmoid in recurrent cells)
    runs up to about twice as fast. Results are unchanged up to float rounding. Set
    ``ITERGRAPH_XLA_OPTIONS`` ("name=value name=value", XLA debug option names; integers,
    ``true``/``false`` and enum names as XLA spells them) to replace the choice; an empty
    string selects XLA's defaults.
    """
    global _options
    if _options is None:
        spec = os.environ.get(ENV_XLA_OPTIONS)
        if spec is None:
            cpu = jax().default_backend() == "cpu"
            _options = {"xla_cpu_prefer_vector_width": 512} if cpu and _host_has_avx512() else {}
        else:
            _options = {}
            for item in spec.split():
                k, _, v = item.partition("=")
                _options[k] = int(v) if v.lstrip("-").isdigit() else \
                    {"true": True, "false": False}.get(v.lower(), v)
    return dict(_options)


def jit(fn, **kw):
    """`jax.jit` with this backend's XLA compiler options (`compiler_options`)."""
    opts = compiler_options()
    if opts:
        kw["compiler_options"] = opts
    return jax().jit(fn, **kw)
