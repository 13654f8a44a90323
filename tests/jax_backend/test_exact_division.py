"""Float division on JAX is the correctly rounded quotient, as in ONNX Runtime and NumPy.

XLA turns a division by a constant or by a broadcast divisor into a product by the
reciprocal, an ulp off for about a third of float32 quotients; the lowering keeps it a
division. The oracle is ONNX Runtime, bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 32)).astype(np.float32)
CASES = {  # name: (divisor as an initializer or None: fed, divisor value)
    "scalar constant": (True, np.array(3.0, np.float32)),
    "row constant": (True, RNG.standard_normal(32).astype(np.float32)),
    "full constant": (True, RNG.standard_normal((64, 32)).astype(np.float32)),
    "fed scalar": (False, np.array(7.0, np.float32)),
    "fed full": (False, RNG.standard_normal((64, 32)).astype(np.float32)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_division_is_the_rounded_quotient(name):
    const, d = CASES[name]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, list(X.shape))]
    inits = []
    if const:
        inits.append(onnx.numpy_helper.from_array(d, "d"))
    else:
        inputs.append(h.make_tensor_value_info("d", T.FLOAT, list(d.shape)))
    g = h.make_graph([h.make_node("Div", ["x", "d"], ["y"])], "g", inputs,
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"x": X} if const else {"x": X, "d": d}
    (want,) = ort.InferenceSession(m.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ig.load(m).run(feeds, backend="jax")["y"]
    assert np.array_equal(got, want), f"{(got != want).sum()} quotients differ"
