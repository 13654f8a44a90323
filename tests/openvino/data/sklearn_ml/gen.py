"""scikit-learn models converted by skl2onnx (``zipmap=False``) whose ONNX holds the
``ai.onnx.ml`` operators, for the OpenVINO writer's tests
(`tests/openvino/test_ov_write_ml_ops.py`): linear models, preprocessing and tree ensembles.
Each ``NAME.onnx`` has ``NAME.npz`` beside it with the input ``X`` (rows with NaN for the
imputer) and scikit-learn's own outputs (``out0``, ``out1``; the tests compare OpenVINO with
ONNX Runtime). skl2onnx 1.20 fails converting ``HistGradientBoosting*`` with missing values;
the tests build such trees with onnx.helper.

Run by hand from the repository root, in an environment with scikit-learn 1.9 and skl2onnx
1.20 (none of them is needed by the test suite)::

    python tests/openvino/data/sklearn_ml/gen.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, MaxAbsScaler, Normalizer, StandardScaler
from sklearn.svm import SVR, LinearSVR, OneClassSVM
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

HERE = Path(__file__).parent
OPSET = {"": 17, "ai.onnx.ml": 3}


def data(classes: int = 0, targets: int = 1, seed: int = 0):
    if classes:
        x, y = make_classification(60, 5, n_informative=4, n_redundant=0, n_classes=classes,
                                   random_state=seed)
    else:
        x, y = make_regression(60, 5, n_targets=targets, random_state=seed)
    return x.astype(np.float32), y


def with_nan(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x[::4, 1] = np.nan
    x[1::5, 3] = np.nan
    return x


def save(name: str, model, x: np.ndarray, outputs) -> None:
    onx = to_onnx(model, x[:1], target_opset=OPSET, options={"zipmap": False}
                  if hasattr(model, "predict_proba") else None)
    (HERE / f"{name}.onnx").write_bytes(onx.SerializeToString())
    np.savez(HERE / f"{name}.npz", X=x,
             **{f"out{i}": np.asarray(o) for i, o in enumerate(outputs)})


def classifier(name: str, model, classes: int, labels=None, nan: bool = False) -> None:
    x, y = data(classes=classes)
    if labels is not None:
        y = np.asarray(labels)[y]
    model.fit(x, y)
    x = with_nan(x) if nan else x
    save(name, model, x, [model.predict(x), model.predict_proba(x).astype(np.float32)])


def regressor(name: str, model, targets: int = 1, nan: bool = False) -> None:
    x, y = data(targets=targets)
    model.fit(x, y)
    x = with_nan(x) if nan else x
    save(name, model, x, [model.predict(x).astype(np.float32)])


def transformer(name: str, model) -> None:
    x, _ = data()
    x[::3, 2] = 0.0
    model.fit(x)
    save(name, model, x, [model.transform(x).astype(np.float32)])


def main() -> None:
    regressor("linear_regression_3targets", LinearRegression(), targets=3)
    classifier("logistic_binary", LogisticRegression(), 2)
    classifier("logistic_3class", LogisticRegression(), 3, labels=[10, 20, 30])
    classifier("logistic_3class_strings", LogisticRegression(), 3, labels=["a", "b", "c"])
    transformer("scaler_normalizer_l2", make_pipeline(StandardScaler(), Normalizer(norm="l2")))
    transformer("maxabs_normalizer_max", make_pipeline(MaxAbsScaler(), Normalizer(norm="max")))
    transformer("normalizer_l1_binarizer",
                make_pipeline(Normalizer(norm="l1"), Binarizer(threshold=0.05)))
    imputer = SimpleImputer(strategy="mean")
    x, _ = data()
    imputer.fit(with_nan(x))
    save("simple_imputer_mean", imputer, with_nan(x), [imputer.transform(with_nan(x))])
    regressor("decision_tree_regressor", DecisionTreeRegressor(max_depth=5, random_state=0))
    regressor("random_forest_regressor_2targets",
              RandomForestRegressor(4, max_depth=4, random_state=0), targets=2)
    regressor("gradient_boosting_regressor",
              GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0))
    classifier("decision_tree_3class", DecisionTreeClassifier(max_depth=4, random_state=0), 3)
    classifier("random_forest_binary", RandomForestClassifier(3, max_depth=4, random_state=0),
               2)
    classifier("random_forest_4class_strings",
               RandomForestClassifier(3, max_depth=4, random_state=0), 4,
               labels=["w", "x", "y", "z"])
    classifier("gradient_boosting_binary",
               GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0), 2)
    classifier("gradient_boosting_3class",
               GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0), 3)


def svms() -> None:
    regressor("svr_rbf", SVR(kernel="rbf", gamma=0.1))
    regressor("svr_poly", SVR(kernel="poly", degree=3, coef0=1.0))
    regressor("svr_sigmoid", SVR(kernel="sigmoid", gamma=0.01))
    regressor("linear_svr", LinearSVR(random_state=0))
    x, _ = data()
    model = OneClassSVM(gamma=0.2).fit(x)
    save("one_class_svm", model, x, [model.predict(x), model.decision_function(x)])


if __name__ == "__main__":
    main()
    svms()
