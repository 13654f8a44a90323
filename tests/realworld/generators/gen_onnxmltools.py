"""Real-world corpus source ``onnxmltools``: gradient-boosted trees from LightGBM and XGBoost
converted by onnxmltools (``convert_lightgbm``, ``convert_xgboost``), the converters users of
those libraries run.

Run by hand from the repository root, in the environment of ``gen_sklearn.py`` plus
``pip install lightgbm xgboost onnxmltools`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_onnxmltools.py

The models: binary and multiclass classifiers and regressors of both libraries, small (a
few dozen trees), trained on synthetic data with fixed seeds; LightGBM with missing values
in the data and a classifier whose ONNX file keeps the ``ZipMap``. The stored outputs are
ONNX Runtime's on each file (``oracle="onnxruntime"``): the converters evaluate thresholds in
float32 where the libraries use float64, so a row next to a threshold may differ from the
library's prediction; ``peer["framework"]`` records how the library's own outputs compare,
``peer["openvino"]`` how OpenVINO's ONNX frontend fares.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import lightgbm  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxmltools  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import xgboost  # noqa: E402
from onnxmltools.convert.common.data_types import FloatTensorType  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from peer_record import compare, message, run_peer  # noqa: E402

warnings.filterwarnings("ignore")
N_FEATURES = 6


def data(n: int, classes: int, seed: int, missing: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, N_FEATURES)).astype(np.float32)
    score = x[:, 0] * 1.5 - x[:, 1] + 0.5 * x[:, 2] * x[:, 3]
    if classes:
        edges = np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])
        y = np.searchsorted(edges, score)
    else:
        y = score + 0.1 * rng.standard_normal(n)
    if missing:
        x[rng.random(x.shape) < 0.1] = np.nan
    return x, y


def lgbm(kind: str, classes: int, missing: bool = False):
    x, y = data(300, classes, 0, missing)
    params = dict(n_estimators=12, num_leaves=7, min_child_samples=5, verbose=-1,
                  random_state=0, n_jobs=1)
    m = (lightgbm.LGBMClassifier if kind == "classifier" else lightgbm.LGBMRegressor)(**params)
    return m.fit(x, y)


def xgb(kind: str, classes: int):
    x, y = data(300, classes, 1)
    params = dict(n_estimators=10, max_depth=3, learning_rate=0.3, random_state=0, n_jobs=1)
    m = (xgboost.XGBClassifier if kind == "classifier" else xgboost.XGBRegressor)(**params)
    return m.fit(x, y)


#: name -> (fitted model maker, library, zipmap, test-data seed, missing, description)
CASES = {
    "lgbm_binary": (lambda: lgbm("classifier", 2), "lightgbm", False, 10, False,
                    "LightGBM binary classifier, 12 trees"),
    "lgbm_multiclass": (lambda: lgbm("classifier", 3), "lightgbm", False, 11, False,
                        "LightGBM 3-class classifier (softmax over per-class trees)"),
    "lgbm_multiclass_zipmap": (lambda: lgbm("classifier", 3), "lightgbm", True, 12, False,
                               "the same with ZipMap (a list of {label: score} maps)"),
    "lgbm_regressor": (lambda: lgbm("regressor", 0), "lightgbm", False, 13, False,
                       "LightGBM regressor"),
    "lgbm_missing": (lambda: lgbm("classifier", 2, True), "lightgbm", False, 14, True,
                     "LightGBM binary classifier trained and run with missing values"),
    "xgb_binary": (lambda: xgb("classifier", 2), "xgboost", False, 15, False,
                   "XGBoost binary classifier, 10 trees of depth 3"),
    "xgb_multiclass": (lambda: xgb("classifier", 3), "xgboost", False, 16, False,
                       "XGBoost 3-class classifier"),
    "xgb_regressor": (lambda: xgb("regressor", 0), "xgboost", False, 17, False,
                      "XGBoost regressor"),
}


def framework_outputs(model, x: np.ndarray) -> list[np.ndarray]:
    if hasattr(model, "predict_proba"):
        return [model.predict(x).astype(np.int64), model.predict_proba(x).astype(np.float32)]
    return [model.predict(x).astype(np.float32).reshape(-1, 1)]


def run_ort(path: Path, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    out = sess.run(None, feeds)
    return [np.array([list(d.values()) for d in v], np.float32)
            if isinstance(v, list) else np.asarray(v) for v in out]


def add(corpus: Corpus, name: str) -> str:
    make, library, zipmap, seed, missing, description = CASES[name]
    model = make()
    types = [("X", FloatTensorType([None, N_FEATURES]))]
    convert = onnxmltools.convert_lightgbm if library == "lightgbm" else \
        onnxmltools.convert_xgboost
    kwargs = {"zipmap": zipmap} if library == "lightgbm" else {}
    onx = convert(model, initial_types=types, target_opset=15, **kwargs)
    path = corpus.path(name, ".onnx")
    onnx.save(onx, str(path))
    x, _ = data(40, 0, seed, missing)
    feeds = {"X": x}
    want = run_ort(path, feeds)
    peers = {"framework": compare(framework_outputs(model, x), want, 1e-4, 1e-5)}
    peers["openvino"] = run_peer("openvino", path, feeds, want, 1e-4, 1e-5)
    opset = next((o.version for o in onx.opset_import if o.domain in ("", "ai.onnx")), None)
    corpus.add(name, path, feeds, want, converter=f"onnxmltools {onnxmltools.__version__} "
               f"({library})", opset=opset,
               oracle="onnxruntime", rtol=1e-4, atol=1e-5, description=description,
               output_names=[o.name for o in onx.graph.output], peer=peers)
    return f"{name}: {peers}"


def main() -> None:
    versions = {"lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
                "onnxmltools": onnxmltools.__version__, "onnx": onnx.__version__,
                "onnxruntime": ort.__version__, "openvino": ov.__version__,
                "numpy": np.__version__}
    corpus = Corpus("onnxmltools", versions)
    for name in CASES:
        try:
            print(add(corpus, name), flush=True)
        except Exception as e:  # noqa: BLE001 - a converter that fails is reported
            print(f"{name}: left out: {type(e).__name__}: {message(e)}", flush=True)
    corpus.save()
    corpus.prune()
    print(f"\n{len(corpus.models)} onnxmltools entries")


if __name__ == "__main__":
    main()
