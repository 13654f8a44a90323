"""``SVMClassifier`` (``ai.onnx.ml``) written to OpenVINO IR (`frontends/openvino/export_svm.py`):
OpenVINO's CPU plugin on itergraph's IR against ONNX Runtime on the original file, labels
exactly, scores to 1e-5. Machines built with onnx.helper: one-vs-one with every kernel, two
and four classes, every post_transform, int64 and string labels, float64 features,
probability estimates (the pairwise coupling, a Loop in the IR), and linear machines (no
support vectors) with positive and mixed coefficients."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from test_ov_write_ml_ops import ML, POST, _agree, _refused

rng = np.random.default_rng(5)
X = rng.normal(size=(9, 3)).astype(np.float32)
X[4] = 0.0  # a row whose pair scores are the rhos alone


def _model(x_type, label_type, **attrs) -> onnx.ModelProto:
    node = h.make_node("SVMClassifier", ["X"], ["Y", "Z"], domain=ML, name="svc", **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", x_type, [None, 3])],
                     [h.make_tensor_value_info("Y", label_type, [None]),
                      h.make_tensor_value_info("Z", T.FLOAT, [None, None])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ML, 1)],
                     ir_version=9)
    onnx.checker.check_model(m)
    return m


def _one_vs_one(classes: int, kernel: str, post: str, strings=False, **extra):
    counts = [int(n) for n in rng.integers(1, 4, size=classes)]
    v = sum(counts)
    labels = {"classlabels_strings": [f"c{i}" for i in range(classes)]} if strings else \
        {"classlabels_ints": [int(n) for n in rng.choice(50, classes, replace=False)]}
    return dict(
        kernel_type=kernel, kernel_params=[0.4, 0.3, 2.0], vectors_per_class=counts,
        support_vectors=rng.normal(size=v * 3).round(2).tolist(),
        coefficients=rng.normal(size=(classes - 1) * v).round(2).tolist(),
        rho=rng.normal(size=classes * (classes - 1) // 2).round(2).tolist(),
        post_transform=post, **labels, **extra)


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
@pytest.mark.parametrize("classes", [2, 4])
@pytest.mark.parametrize("post", POST)
def test_one_vs_one(kernel, classes, post, tmp_path):
    m = _model(T.FLOAT, T.INT64, **_one_vs_one(classes, kernel, post))
    _agree(m, {"X": X}, tmp_path)


@pytest.mark.parametrize("classes", [2, 3])
def test_one_vs_one_string_labels_double_features(classes, tmp_path):
    m = _model(T.DOUBLE, T.STRING, **_one_vs_one(classes, "RBF", "NONE", strings=True))
    _agree(m, {"X": X.astype(np.float64)}, tmp_path)


@pytest.mark.parametrize("coefficients", ["positive", "mixed"])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_linear_machine(coefficients, classes, post, tmp_path):
    coef = rng.normal(size=classes * 3).round(2)
    coef = np.abs(coef) * 0.3 if coefficients == "positive" else coef
    m = _model(T.FLOAT, T.INT64, coefficients=coef.tolist(), rho=[-0.2], post_transform=post,
               classlabels_ints=list(range(3, 3 + classes)), kernel_type="LINEAR",
               kernel_params=[0.0, 0.0, 0.0])  # ONNX Runtime wants them
    _agree(m, {"X": X}, tmp_path)


@pytest.mark.parametrize("classes", [2, 3, 5])
@pytest.mark.parametrize("post", ["NONE", "SOFTMAX"])
def test_probability_estimates(classes, post, tmp_path):
    pairs = classes * (classes - 1) // 2
    attrs = _one_vs_one(classes, "RBF", post, prob_a=(-rng.random(pairs) * 3).round(2).tolist(),
                        prob_b=rng.normal(size=pairs).round(2).tolist())
    _agree(_model(T.FLOAT, T.INT64, **attrs), {"X": X}, tmp_path)


def test_probit_is_refused(tmp_path):
    _refused(_model(T.FLOAT, T.INT64, **_one_vs_one(3, "RBF", "PROBIT")), tmp_path,
             "SVMClassifier node 'svc'.*PROBIT")
