"""Cases that misbehave on purpose, for `test_hostile.test_the_harness_names_every_failure`:
the harness must report each as a failure of that case, and go on with the others."""

from __future__ import annotations

import os
import time

from harness import Ok, Raises, case

from itergraph.errors import ModelError


@case("selftest/crash", Raises(ModelError))
def _(c):
    os.abort()


@case("selftest/hang", Raises(ModelError), timeout=2)
def _(c):
    time.sleep(60)


@case("selftest/raw_exception", Raises(ModelError))
def _(c):
    raise KeyError("raw")


@case("selftest/huge_allocation", Raises(ModelError))
def _(c):
    import numpy as np

    np.ones(10**10)


@case("selftest/wrong_class", Raises(ModelError, "x"))
def _(c):
    from itergraph.errors import InputError

    raise InputError("x")


@case("selftest/silently_accepted", Raises(ModelError))
def _(c):
    pass


@case("selftest/fine", Ok())
def _(c):
    pass
