"""The JAX backend's CPU dispatch choice (`backends.jax.config`): synchronous unless the
environment asks to keep JAX's own setting."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("jax")

PROBE = """
from itergraph.backends.jax import config
config.jax()
import jax
print(jax.config.values["jax_cpu_enable_async_dispatch"])
"""


def _dispatch(env_value):
    env = dict(os.environ)
    env.pop("ITERGRAPH_JAX_ASYNC_DISPATCH", None)
    if env_value is not None:
        env["ITERGRAPH_JAX_ASYNC_DISPATCH"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_cpu_dispatch_is_synchronous_by_default():
    assert _dispatch(None) == "False"


def test_environment_keeps_jax_async_dispatch():
    assert _dispatch("1") == "True"
