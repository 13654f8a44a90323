"""scikit-learn models converted by skl2onnx (source ``sklearn``) and the same ONNX files
converted by OpenVINO's ONNX frontend and saved as IR (source ``sklearn-ov``).

Run by hand from the repository root, in the scikit-learn environment (scikit-learn,
skl2onnx, onnx, onnxruntime, openvino; none of them is needed by the test suite):

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_sklearn.py   (see README.md here)

What it covers: the models whose ONNX holds loops or the ``ai.onnx.ml`` ops users meet.

- k-NN (``KNeighborsClassifier/Regressor``, ``RadiusNeighbors*``, ``NearestNeighbors``,
  ``KNeighborsTransformer``): skl2onnx writes the pairwise distances as a ``Scan`` over the
  query rows (``onnx_cdist``), then ``TopK`` and ``ArrayFeatureExtractor`` on the labels;
  brute force with the euclidean, manhattan, minkowski (p=3) and cosine metrics, uniform
  and distance weights, int64 and string labels, float32 and float64 inputs.
- ``KNNImputer``: opset 18+ only; the converter writes nine model-local functions
  (domain ``local_domain``) with ``If`` inside them.
- ``GaussianProcessRegressor`` (RBF, Matern, ExpSineSquared, RationalQuadratic, sums and
  products with ConstantKernel/WhiteKernel; ``return_std``), ``KernelPCA`` (rbf) and
  ``LocalOutlierFactor(novelty=True)``: Scan-based distances again.
- Classifiers followed by ``ZipMap`` (skl2onnx's default ``zipmap=True``): the probability
  output is a sequence of maps (class -> probability). The stored ``outN`` for it is
  scikit-learn's ``predict_proba`` as a ``[N, n_classes]`` float32 matrix: row i is the i-th
  map of the sequence, column j the j-th key in ascending class order. Each such entry has a
  ``zipmap=False`` twin whose file outputs that matrix directly.

Each model is written at the oldest ``target_opset`` for which skl2onnx writes a valid model
(found by trying 1, 2, ... upwards; what happens below it is printed: at opset 8 skl2onnx
accepts the Scan models but writes a Scan-8 without its ``sequence_lens`` input, which ONNX
shape inference and ONNX Runtime refuse, so Scan models start at 9) and at the newest it offers
(``get_latest_tested_opset_version()``, 22 for skl2onnx 1.20; 23+ is refused).

Where skl2onnx's file computes something else than scikit-learn (``weights='distance'`` in
k-NN: see ``DISTANCE_BUG``), the entry keeps the file and stores ONNX Runtime's outputs
(``oracle="onnxruntime"``, confirmed by ``onnx.reference``), saying so in its description.
``GaussianProcessClassifier`` is converted but left out: skl2onnx writes ``com.microsoft:Solve``,
which neither ONNX nor ONNX Runtime defines.

Stored outputs are scikit-learn's own (``predict``, ``predict_proba``, ``kneighbors``,
``transform``, ``decision_function``/``score_samples``), cast to the element type and
reshaped to the rank the file declares (e.g. ``predict`` of a regressor ``[N]`` -> ``[N, 1]``;
where an output is declared without a shape, to the rank ONNX Runtime returns).
Peers: ONNX Runtime and OpenVINO (CPU, f32 inference precision) on every file.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import skl2onnx  # noqa: E402
import sklearn  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from skl2onnx import get_latest_tested_opset_version, to_onnx  # noqa: E402
from sklearn.decomposition import KernelPCA  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.gaussian_process import (  # noqa: E402
    GaussianProcessClassifier,
    GaussianProcessRegressor,
)
from sklearn.gaussian_process.kernels import (  # noqa: E402
    RBF,
    ConstantKernel,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)
from sklearn.impute import KNNImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.neighbors import (  # noqa: E402
    KNeighborsClassifier,
    KNeighborsRegressor,
    KNeighborsTransformer,
    LocalOutlierFactor,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402

warnings.filterwarnings("ignore")

NEWEST = get_latest_tested_opset_version()
N_TRAIN, N_FEAT, N_QUERY = 24, 4, 3
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
ELEM = {1: np.float32, 6: np.int32, 7: np.int64, 8: np.str_, 9: np.bool_, 11: np.float64}


@dataclass
class Case:
    """One scikit-learn model to convert at several opsets."""

    name: str
    make: Callable[[], object]  # fitted estimator
    query: np.ndarray
    outputs: Callable[[object, np.ndarray], list]  # framework outputs in the file's order
    tags: tuple[str, ...]
    description: str
    options: dict = field(default_factory=dict)
    opsets: str = "both"  # "both" | "newest"
    rtol: float = 1e-4
    atol: float = 1e-5
    zipmap: bool = False  # the file's probability output is ZipMap's seq(map)
    file_differs: str = ""  # why skl2onnx's file computes something else than scikit-learn


def data(seed: int, n: int = N_TRAIN, d: int = N_FEAT, dtype=np.float32) -> np.ndarray:
    return np.random.RandomState(seed).randn(n, d).astype(dtype)


X = data(0)
XQ = data(1, N_QUERY)
XD, XQD = X.astype(np.float64), XQ.astype(np.float64)
Y3 = (X[:, 0] > 0.3).astype(np.int64) + (X[:, 1] > 0).astype(np.int64)
Y2 = (X[:, 0] + X[:, 2] > 0).astype(np.int64)
YS = np.array(["bird", "cat", "dog"])[Y3]
YR = (X @ np.array([1.0, -2.0, 0.5, 0.3]) + np.sin(3 * X[:, 0])).astype(np.float32)
YR2 = np.stack([YR, X[:, 1] ** 2], axis=1)
# the GP data lives on a smaller grid so that the kernels stay well conditioned in float32
XG = (np.random.RandomState(2).rand(12, 2) * 4).astype(np.float32)
XGQ = (np.random.RandomState(3).rand(N_QUERY, 2) * 4).astype(np.float32)
YG = np.sin(XG[:, 0]) + np.cos(XG[:, 1])
XN = X.copy()
XN[np.random.RandomState(4).rand(*X.shape) < 0.15] = np.nan
XNQ = XQ.copy()
XNQ[0, 1] = XNQ[2, 3] = XNQ[2, 0] = np.nan


def classify(est, x):
    return [est.predict(x), est.predict_proba(x)]


def regress(est, x):
    return [est.predict(x)]


def kneighbors(est, x):
    dist, idx = est.kneighbors(x)
    return [idx, dist]


def transform(est, x):
    out = est.transform(x)
    return [out.toarray() if hasattr(out, "toarray") else out]


def gp_std(est, x):
    mean, std = est.predict(x, return_std=True)
    return [mean, std]


def lof(est, x):
    return [est.predict(x), est.decision_function(x), est.score_samples(x)]


def knn_c(**kw):
    return lambda: KNeighborsClassifier(algorithm="brute", **kw).fit(X, Y3)


def gpr(kernel, x=XG, **kw):
    return lambda: GaussianProcessRegressor(kernel, alpha=1e-4, random_state=0, **kw).fit(x, YG)


ZIPMAP_NOTE = (" Output 'output_probability' is ZipMap's seq(map(int64, float)); out1 stores "
               "predict_proba as the [N, n_classes] float32 matrix: row i = the i-th map, "
               "column j = the j-th key in ascending class order.")
NOZIP = {"zipmap": False}
GP_F32 = ("Kernel matrices built in float32 against scikit-learn's float64: "
          "rtol 1e-3 / atol 1e-3.")
GP_F32_STD = ("Kernel matrices built in float32 against scikit-learn's float64; the std "
              "sqrt(k(x, x) - v.v) loses digits to cancellation in float32: rtol 1e-3 / "
              "atol 5e-3.")
DISTANCE_BUG = ("skl2onnx 1.20 writes weights='distance' wrongly: the TopK distances are "
                "multiplied by -1, so Max(d, 1e-6) is 1e-6 everywhere and the weights are "
                "uniform. The file computes uniform-weight k-NN; outputs are ONNX Runtime's "
                "(onnx.reference agrees), not scikit-learn's.")

CASES = [
    # ---- k-NN classifiers: Scan (cdist) + TopK + ArrayFeatureExtractor (+ ZipMap) ----
    Case("knn_classifier_zipmap", knn_c(n_neighbors=3), XQ, classify,
         ("knn", "scan", "zipmap"),
         "KNeighborsClassifier(3, brute, euclidean), default options (zipmap=True)."
         + ZIPMAP_NOTE, zipmap=True),
    Case("knn_classifier", knn_c(n_neighbors=3), XQ, classify, ("knn", "scan"),
         "KNeighborsClassifier(3, brute, euclidean), zipmap=False: label and probability "
         "tensors.", NOZIP),
    Case("knn_classifier_distance_manhattan",
         knn_c(n_neighbors=4, weights="distance", metric="manhattan"), XQ, classify,
         ("knn", "scan"), "KNeighborsClassifier(4, weights='distance', metric='manhattan'), "
         "zipmap=False.", NOZIP, file_differs=DISTANCE_BUG),
    Case("knn_classifier_minkowski_p3", knn_c(n_neighbors=3, p=3), XQ, classify,
         ("knn", "scan"), "KNeighborsClassifier(3, minkowski p=3): Scan of |a-b|^3 sums, "
         "then Pow 1/3; zipmap=False.", NOZIP, opsets="newest"),
    Case("knn_classifier_cosine_zipmap", knn_c(n_neighbors=5, metric="cosine"), XQ, classify,
         ("knn", "scan", "zipmap"), "KNeighborsClassifier(5, metric='cosine'), default "
         "zipmap." + ZIPMAP_NOTE, opsets="newest", zipmap=True),
    Case("knn_classifier_string_labels_zipmap",
         lambda: KNeighborsClassifier(3, algorithm="brute").fit(X, YS), XQ, classify,
         ("knn", "scan", "zipmap"), "KNeighborsClassifier(3) on string labels: output_label "
         "is tensor(string); output_probability is ZipMap's seq(map(string, float)); out1 "
         "stores predict_proba [N, n_classes] float32, columns = keys in sorted order.",
         opsets="newest", zipmap=True),
    Case("knn_classifier_string_labels",
         lambda: KNeighborsClassifier(3, algorithm="brute").fit(X, YS), XQ, classify,
         ("knn", "scan"), "KNeighborsClassifier(3) on string labels, zipmap=False: "
         "output_label is tensor(string).", NOZIP, opsets="newest"),
    Case("pipeline_scaler_knn_classifier_zipmap",
         lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(3)).fit(X, Y3), XQ,
         classify, ("knn", "scan", "zipmap"), "Pipeline(StandardScaler -> ai.onnx.ml Scaler, "
         "KNeighborsClassifier(3)), default zipmap." + ZIPMAP_NOTE, zipmap=True),
    # ---- k-NN regressors ----
    Case("knn_regressor", lambda: KNeighborsRegressor(3).fit(X, YR), XQ, regress,
         ("knn", "scan"), "KNeighborsRegressor(3, uniform, euclidean): predict [N] stored "
         "as [N, 1] float32."),
    Case("knn_regressor_distance", lambda: KNeighborsRegressor(4, weights="distance")
         .fit(X, YR), XQ, regress, ("knn", "scan"),
         "KNeighborsRegressor(4, weights='distance'): [N, 1] float32.",
         file_differs=DISTANCE_BUG),
    Case("knn_regressor_manhattan_double",
         lambda: KNeighborsRegressor(3, metric="manhattan").fit(XD, YR.astype(np.float64)),
         XQD, regress, ("knn", "scan"), "KNeighborsRegressor(3, manhattan) converted with "
         "a float64 input: the Scan body runs in double; predict stored as [N, 1] float64.",
         opsets="newest"),
    Case("knn_regressor_multioutput", lambda: KNeighborsRegressor(3).fit(X, YR2), XQ,
         regress, ("knn", "scan"), "KNeighborsRegressor(3) on 2 targets: [N, 2] float32.",
         opsets="newest"),
    # ---- radius neighbours: Scan + CumSum/Where masks ----
    Case("radius_classifier", lambda: RadiusNeighborsClassifier(2.5, algorithm="brute")
         .fit(X, Y3), XQ, classify, ("knn", "scan"),
         "RadiusNeighborsClassifier(radius=2.5): label and probabilities tensors (its "
         "converter writes no ZipMap)."),
    Case("radius_regressor", lambda: RadiusNeighborsRegressor(2.5).fit(X, YR), XQ, regress,
         ("knn", "scan"), "RadiusNeighborsRegressor(radius=2.5): predict stored as [N, 1]."),
    # ---- NearestNeighbors.kneighbors and KNeighborsTransformer ----
    Case("nearest_neighbors_kneighbors",
         lambda: NearestNeighbors(n_neighbors=3, radius=None).fit(X), XQ, kneighbors,
         ("knn", "scan"), "NearestNeighbors(3).kneighbors: outputs (index int64, distance "
         "float32) in the file's order (scikit-learn returns distance first). radius=None: "
         "skl2onnx refuses a model with both radius and n_neighbors set."),
    Case("kneighbors_transformer_distance",
         lambda: KNeighborsTransformer(n_neighbors=3, mode="distance").fit(X), XQ, transform,
         ("knn", "scan"), "KNeighborsTransformer(3, mode='distance').transform: the sparse "
         "[N, n_train] graph stored dense float32 (zeros where no edge)."),
    Case("kneighbors_transformer_connectivity",
         lambda: KNeighborsTransformer(n_neighbors=2, mode="connectivity").fit(X), XQ,
         transform, ("knn", "scan"), "KNeighborsTransformer(2, mode='connectivity')"
         ".transform, dense [N, n_train] float32 of 0/1.", opsets="newest"),
    # ---- KNNImputer: model-local functions ----
    Case("knn_imputer", lambda: KNNImputer(n_neighbors=2).fit(XN), XNQ, transform,
         ("knn", "function", "cond"), "KNNImputer(2) with NaNs in the training and query "
         "data: the converter (opset >= 18) writes nine model-local functions in "
         "'local_domain' calling each other, with If inside; transform [N, 4] float32."),
    # ---- Gaussian processes ----
    Case("gpr_rbf", gpr(RBF(1.0)), XGQ, regress, ("gp", "scan"),
         "GaussianProcessRegressor(RBF): predict as [N, 1] float32. " + GP_F32,
         rtol=1e-3, atol=1e-3),
    Case("gpr_rbf_return_std_double",
         lambda: GaussianProcessRegressor(RBF(1.0), alpha=1e-4).fit(XG.astype(np.float64), YG),
         XGQ.astype(np.float64), gp_std, ("gp", "scan"),
         "GaussianProcessRegressor(RBF), options return_std=True, float64 input: outputs "
         "GPmean [N, 1] and GPcovstd [N] float64.", {"return_std": True}),
    Case("gpr_matern_return_std", gpr(ConstantKernel(1.0) * Matern(1.0, nu=1.5)), XGQ, gp_std,
         ("gp", "scan"), "GaussianProcessRegressor(C * Matern(nu=1.5)), return_std=True: "
         "euclidean cdist Scan. " + GP_F32_STD, {"return_std": True}, opsets="newest",
         rtol=1e-3, atol=5e-3),
    Case("gpr_expsine", gpr(ExpSineSquared(1.0, 3.0) + WhiteKernel(1e-2), XG[:, :1]),
         XGQ[:, :1], regress, ("gp", "scan"), "GaussianProcessRegressor(ExpSineSquared + "
         "WhiteKernel) on 1-D inputs (the kernel is positive definite only there). " + GP_F32,
         opsets="newest", rtol=1e-3, atol=1e-3),
    Case("gpr_rational_quadratic_double",
         lambda: GaussianProcessRegressor(RationalQuadratic(1.0, 1.5), alpha=1e-4)
         .fit(XG.astype(np.float64), YG), XGQ.astype(np.float64), gp_std, ("gp", "scan"),
         "GaussianProcessRegressor(RationalQuadratic), return_std=True, float64 input.",
         {"return_std": True}, opsets="newest"),
    Case("gpr_dot_plus_rbf_return_std_double",
         lambda: GaussianProcessRegressor(DotProduct(1.0) + ConstantKernel(0.5)
                                          * RBF([1.0, 2.0]), alpha=1e-4)
         .fit(XG.astype(np.float64), YG), XGQ.astype(np.float64), gp_std, ("gp", "scan"),
         "GaussianProcessRegressor(DotProduct + C * RBF(anisotropic)), return_std=True, "
         "float64 input (in float32 the std is off by 0.07).", {"return_std": True},
         opsets="newest"),
    # ---- LocalOutlierFactor (novelty) and KernelPCA ----
    Case("lof_novelty", lambda: LocalOutlierFactor(5, novelty=True).fit(X), data(5, N_QUERY) * 2,
         lof, ("lof", "knn", "scan"), "LocalOutlierFactor(5, novelty=True), options "
         "score_samples=True: outputs label [N, 1] int64 (predict), scores [N, 1] "
         "(decision_function), score_samples [N, 1] float32.", {"score_samples": True}),
    Case("lof_novelty_manhattan",
         lambda: LocalOutlierFactor(4, novelty=True, metric="manhattan").fit(X),
         data(5, N_QUERY) * 2, lof, ("lof", "knn", "scan"), "LocalOutlierFactor(4, "
         "novelty=True, metric='manhattan'), score_samples=True: label, scores, score_samples.",
         {"score_samples": True}, opsets="newest"),
    Case("kernel_pca_rbf", lambda: KernelPCA(3, kernel="rbf", gamma=0.3).fit(X), XQ,
         transform, ("scan",), "KernelPCA(3, kernel='rbf').transform: the kernel against the "
         "training rows is a cdist Scan; [N, 3] float32."),
    # ---- classifiers with ai.onnx.ml ops and ZipMap, no loop ----
    Case("logistic_regression_zipmap", lambda: LogisticRegression().fit(X, Y3), XQ, classify,
         ("zipmap",), "LogisticRegression (ai.onnx.ml LinearClassifier + Normalizer), default "
         "zipmap." + ZIPMAP_NOTE, zipmap=True),
    Case("logistic_regression", lambda: LogisticRegression().fit(X, Y3), XQ, classify, (),
         "LogisticRegression (ai.onnx.ml LinearClassifier + Normalizer), zipmap=False.", NOZIP),
    Case("random_forest_zipmap",
         lambda: RandomForestClassifier(4, max_depth=3, random_state=0).fit(X, Y2), XQ,
         classify, ("zipmap",), "RandomForestClassifier(4 trees, depth 3), binary: ai.onnx.ml "
         "TreeEnsembleClassifier + default zipmap." + ZIPMAP_NOTE, opsets="newest",
         zipmap=True),
    Case("random_forest", lambda: RandomForestClassifier(4, max_depth=3, random_state=0)
         .fit(X, Y2), XQ, classify, (), "RandomForestClassifier(4 trees, depth 3), "
         "zipmap=False.", NOZIP, opsets="newest"),
]

# converted but left out of the corpus (the file is not standard ONNX); see EXCLUDED below
PROBE_ONLY = [
    Case("gpc_rbf", lambda: GaussianProcessClassifier(RBF()).fit(X, Y2), XQ, classify, (),
         "", NOZIP, opsets="newest"),
]


# OpenVINO wraps the reason in lines saying where it was raised; skip those
OV_WRAPPERS = ("Exception from", "Check '", "FrontEnd API failed", "Model wasn't fully",
               "Summary:")


def first_line(e: BaseException) -> str:
    """The reason an error gives, on one line: its first line, or for OpenVINO's nested
    messages the conversion summary, else the lines that are not wrappers, joined."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if "Summary:" in lines:
        text = "; ".join(lines[lines.index("Summary:") + 1:])
    elif lines and lines[0].startswith(OV_WRAPPERS):
        text = " / ".join(line for line in lines if not line.startswith(OV_WRAPPERS))
    else:
        text = lines[0] if lines else ""
    return f"{type(e).__name__}: {text}"[:300]


def convert(est, sample, opset, options):
    opts = {id(est): options} if options else None
    return stable(to_onnx(est, sample, target_opset=opset, options=opts))


def stable(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model with what skl2onnx leaves to chance fixed, so that reruns write the
    same bytes: opset imports sorted (skl2onnx lists them in set order) and the Python
    object ids it puts in some names (``norm_140497699521424_C0``) replaced, in order of
    first appearance, by counters of the same width (a same-length byte substitution keeps
    every protobuf length prefix valid)."""
    for owner in [model, *model.functions]:
        imports = sorted(owner.opset_import, key=lambda o: (o.domain, o.version))
        del owner.opset_import[:]
        owner.opset_import.extend(imports)
    data = model.SerializeToString()
    ids: dict[bytes, bytes] = {}
    for found in re.findall(rb"_(\d{9,})_", data):
        ids.setdefault(found, str(len(ids) + 1).zfill(len(found)).encode())
    for old, new in ids.items():
        data = data.replace(b"_" + old + b"_", b"_" + new + b"_")
    return onnx.load_from_string(data)


def oldest_opset(est, sample, options) -> tuple[int, str]:
    """The lowest target_opset for which skl2onnx writes a valid model (strict ONNX shape
    inference passes; the full checker is not used: it also refuses the graph outputs
    skl2onnx declares without a shape, which ONNX Runtime accepts), and what happened at the
    opsets below it (refusal or invalid model)."""
    why: dict[str, list[int]] = {}
    for opset in range(1, NEWEST + 1):
        try:
            model = convert(est, sample, opset, options)
        except Exception as e:  # noqa: BLE001 - the converter raises many kinds
            why.setdefault("refused: " + first_line(e), []).append(opset)
            continue
        try:
            onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except Exception as e:  # noqa: BLE001
            why.setdefault("accepted, invalid model: " + first_line(e), []).append(opset)
            continue
        notes = [f"{reason} (opset {min(ops)}..{max(ops)})" for reason, ops in why.items()]
        return opset, "; ".join(notes[-2:])
    raise RuntimeError(f"no opset <= {NEWEST} gives a valid model: {why}")


def elem_of(value_info) -> type | None:
    t = value_info.type
    if t.HasField("tensor_type"):
        return ELEM[t.tensor_type.elem_type]
    return None  # sequence / map


def rank_of(value_info) -> int | None:
    t = value_info.type
    if t.HasField("tensor_type") and t.tensor_type.HasField("shape"):
        return len(t.tensor_type.shape.dim)
    return None


def fit_to(value: np.ndarray, elem, rank) -> np.ndarray:
    """``value`` cast to the file's element type and reshaped to its declared rank."""
    value = np.asarray(value)
    if elem is not None:
        value = value.astype(elem)
    if rank is not None and value.ndim != rank:
        if rank == value.ndim + 1:
            value = value.reshape(value.shape + (1,))
        elif rank == value.ndim - 1 and value.shape[-1] == 1:
            value = value.reshape(value.shape[:-1])
        else:
            raise ValueError(f"cannot fit shape {value.shape} to rank {rank}")
    return value


def as_matrix(value) -> np.ndarray:
    """ZipMap's list of dicts -> [N, n_classes] float32 (keys in ascending order)."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        keys = sorted(value[0])
        return np.array([[row[k] for k in keys] for row in value], dtype=np.float32)
    return np.asarray(value)


def compare(got: list, want: list[np.ndarray], rtol: float, atol: float) -> str:
    if len(got) != len(want):
        return f"mismatch: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g = as_matrix(g)
        if w.dtype.kind in "US":
            same = all(str(a) == str(b) for a, b in zip(g.ravel(), w.ravel()))
            if g.shape != w.shape or not same:
                return f"mismatch: output {i} strings {g.ravel()[:4]} vs {w.ravel()[:4]}"
            continue
        if g.shape != w.shape:
            return f"mismatch: output {i} shape {g.shape} vs {w.shape}"
        if w.dtype.kind in "iub":
            if not np.array_equal(g, w):
                return f"mismatch: output {i} values {g.ravel()[:6]} vs {w.ravel()[:6]}"
            continue
        g, w = g.astype(np.float64), w.astype(np.float64)
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            return f"mismatch: output {i} max err {np.nanmax(np.abs(g - w)):.3g}"
    return "ok"


def run_ort(path: Path, feeds: dict) -> list:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_reference(path: Path, feeds: dict) -> list:
    return ReferenceEvaluator(str(path)).run(None, feeds)


def run_ov(path: Path, feeds: dict) -> list:
    compiled = ov.Core().compile_model(str(path), "CPU", OV_CONFIG)
    result = compiled(feeds)
    return [np.asarray(result[out]) for out in compiled.outputs]


def peer(fn, path, feeds, want, rtol, atol) -> str:
    try:
        return compare(fn(path, feeds), want, rtol, atol)
    except Exception as e:  # noqa: BLE001 - a peer's refusal is recorded, not raised
        return "error: " + first_line(e)


def ov_outputs(xml: Path, want: list[np.ndarray]) -> list[np.ndarray]:
    """The framework outputs cast to the element types the IR declares."""
    model = ov.Core().read_model(str(xml))
    out = []
    for port, value in zip(model.outputs, want):
        et = port.get_element_type()
        np_type = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
                   "boolean": np.bool_}.get(et.get_type_name())
        out.append(value if np_type is None else value.astype(np_type))
    return out


def add_onnx(skl: Corpus, case: Case, name: str, model, est, opset: int) -> tuple:
    """Write the skl2onnx file, check it with its peers, record it; returns (path, feeds,
    expected outputs, oracle)."""
    path = skl.path(name, ".onnx")
    onnx.save(model, path)
    feeds = {model.graph.input[0].name: case.query}
    raw = case.outputs(est, case.query)
    ranks = [rank_of(o) for o in model.graph.output]
    if any(r is None and elem_of(o) is not None for r, o in zip(ranks, model.graph.output)):
        # a tensor output declared without a shape: take the rank ORT returns
        ranks = [r if r is not None else np.ndim(as_matrix(v))
                 for r, v in zip(ranks, run_ort(path, feeds))]
    want = [fit_to(v, elem_of(o) if elem_of(o) is not None else np.float32, r)
            for v, o, r in zip(raw, model.graph.output, ranks)]
    check = {"onnxruntime": run_ort, "onnx.reference": run_reference, "openvino": run_ov}
    peers = {k: peer(fn, path, feeds, want, case.rtol, case.atol) for k, fn in check.items()}
    oracle, description = "framework", case.description
    if case.file_differs:
        # the file is not scikit-learn's model: its own semantics come from ONNX Runtime,
        # confirmed by onnx.reference
        got = [fit_to(as_matrix(v), w.dtype, w.ndim) for v, w in zip(run_ort(path, feeds), want)]
        framework = peers["onnxruntime"]
        peers = {k: peer(fn, path, feeds, got, case.rtol, case.atol) for k, fn in check.items()}
        peers["framework"] = framework
        if peers["onnx.reference"] != "ok" or framework == "ok":
            raise RuntimeError(f"{name}: file_differs does not hold: {peers}")
        want, oracle = got, "onnxruntime"
        description += " " + case.file_differs + f" scikit-learn vs the file: {framework}."
    if peers["openvino"].startswith("mismatch") and case.query.dtype == np.float64:
        description += (" OpenVINO's CPU plugin runs float64 graphs in float32: on this file "
                        f"it is off by more than the tolerance ({peers['openvino']}).")
    skl.add(name, path, feeds, want, converter="skl2onnx", opset=opset, oracle=oracle,
            rtol=case.rtol, atol=case.atol, tags=case.tags, description=description,
            output_names=[o.name for o in model.graph.output], peer=peers)
    print(f"sklearn/{name}: {peers}")
    return path, feeds, want, oracle, description


def add_ir(skl_ov: Corpus, case: Case, name: str, opset: int, onnx_path: Path, feeds: dict,
           want: list, oracle: str, description: str) -> str:
    """OpenVINO's ONNX frontend on the skl2onnx file, saved as IR; '' or why it refused."""
    xml = skl_ov.path(name, ".xml")
    try:
        ov_model = ov.convert_model(str(onnx_path))
        ov.save_model(ov_model, str(xml), compress_to_fp16=False)
    except Exception as e:  # noqa: BLE001
        return first_line(e)
    want_ov = ov_outputs(xml, want)
    peers = {"openvino": peer(run_ov, xml, feeds, want_ov, case.rtol, case.atol)}
    out_names = [sorted(p.get_names())[0] if p.get_names() else f"out{i}"
                 for i, p in enumerate(ov_model.outputs)]
    skl_ov.add(name, xml, feeds, want_ov, converter="openvino.convert_model(onnx)",
               opset=opset, oracle=oracle, rtol=case.rtol, atol=case.atol, tags=case.tags,
               description=description + " OpenVINO IR from ov.convert_model on the "
               f"skl2onnx file sklearn/{name}.onnx.", output_names=out_names, peer=peers)
    print(f"sklearn-ov/{name}: {peers}")
    return ""


def probe_only(case: Case, name: str, model) -> str:
    """Why a converted model is left out of the corpus."""
    path = Path("/tmp") / f"{name}.onnx"
    onnx.save(model, path)
    domains = sorted({n.domain for n in model.graph.node if n.domain})
    try:
        run_ort(path, {model.graph.input[0].name: case.query})
        return f"{name}: custom domains {domains}; ORT runs it"
    except Exception as e:  # noqa: BLE001
        return f"{name}: not added, custom domains {domains}; ORT: {first_line(e)}"


def main() -> None:
    versions = {"scikit-learn": sklearn.__version__, "skl2onnx": skl2onnx.__version__,
                "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "openvino": ov.__version__, "numpy": np.__version__}
    skl = Corpus("sklearn", versions)
    skl_ov = Corpus("sklearn-ov", versions)
    failures: list[str] = []
    ov_refused: list[str] = []
    opset_notes: list[str] = []

    for case in CASES + PROBE_ONLY:
        est = case.make()
        sample = case.query[:1]
        try:
            low, why = oldest_opset(est, sample, case.options)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{case.name}: {first_line(e)}")
            continue
        opset_notes.append(f"{case.name}: oldest {low}" + (f"; below: {why}" if why else ""))
        opsets = [NEWEST] if case.opsets == "newest" or low == NEWEST else [low, NEWEST]
        for opset in opsets:
            name = f"{case.name}_op{opset}"
            try:
                model = convert(est, sample, opset, case.options)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: {first_line(e)}")
                continue
            if case in PROBE_ONLY:
                failures.append(probe_only(case, name, model))
                continue
            onnx_path, feeds, want, oracle, description = add_onnx(skl, case, name, model,
                                                                   est, opset)
            refused = add_ir(skl_ov, case, name, opset, onnx_path, feeds, want, oracle,
                             description)
            if refused:
                ov_refused.append(f"{name}: {refused}")

    skl.save()
    skl_ov.save()
    print(f"\n{len(skl.models)} sklearn, {len(skl_ov.models)} sklearn-ov entries")
    print("\noldest target_opset per model:\n  " + "\n  ".join(opset_notes))
    try:
        convert(CASES[0].make(), XQ[:1], NEWEST + 1, {})
    except Exception as e:  # noqa: BLE001
        print(f"\ntarget_opset {NEWEST + 1}: {first_line(e)}")
    print("\nexports that failed or were left out:\n  " + "\n  ".join(failures or ["none"]))
    print("\nOpenVINO ONNX frontend refused:\n  " + "\n  ".join(ov_refused or ["none"]))


if __name__ == "__main__":
    main()
