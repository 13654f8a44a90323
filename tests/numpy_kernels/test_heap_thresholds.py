"""`backends.numpy.heap`: once a plan is compiled, a call's large temporaries are reused from
the heap (glibc), where with glibc's own thresholds they are faulted in again page by page
on every call."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from itergraph.backends.numpy import heap

# a call's temporaries: eight arrays of 0.6-0.9 MB alive together, then freed (as a Conv
# model's outputs and im2col buffers are); page faults per call after a warm-up
PROBE = """
import resource
import numpy as np
def call():
    xs = [np.ones(150_000 + 10_000 * k, np.float32) for k in range(8)]
    return sum(float(x[0]) for x in xs)
def faults(calls=20):
    for _ in range(5):
        call()
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        call()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / calls
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr(
    "CS_GNU_LIBC_VERSION") is None or os.environ.get(heap.ENV_DEFAULTS, "") not in ("", "0"),
    reason="the thresholds are set only under glibc's malloc, and not when "
           "ITERGRAPH_MALLOC_DEFAULTS asks to leave glibc alone")
def test_temporaries_stay_in_the_heap_once_a_plan_is_compiled():
    out = subprocess.run([sys.executable, "-c", PROBE + "print(faults())"], capture_output=True,
                         text=True, timeout=60, check=True)
    default = float(out.stdout.split()[-1])  # a process with glibc's own thresholds
    heap.keep_temporaries()  # done when this process compiled its first plan
    scope: dict = {"np": np, "resource": resource}
    exec(PROBE, scope)
    kept = scope["faults"]()
    assert kept < 20, kept  # an 8 MB working set reused: no page faulted in again
    assert default > 10 * max(kept, 20), (kept, default)  # where glibc's own rule does
