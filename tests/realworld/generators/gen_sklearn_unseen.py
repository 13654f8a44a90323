"""scikit-learn models converted by skl2onnx that the ``sklearn`` source does not hold (source
``sklearn-unseen``): the everyday pipeline pieces rather than the loop-heavy neighbours.

Run by hand from the repository root, in the environment of ``gen_sklearn.py``:

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_sklearn_unseen.py

What it covers: scalers, ``Normalizer``, ``Binarizer``, ``PolynomialFeatures``,
``SimpleImputer``, ``PCA`` (plain and whitened), ``TruncatedSVD``; k-NN in pipelines and
``KNNImputer`` with distance weights; decision trees, forests, extra trees, gradient boosting
and ``IsolationForest`` (``ai.onnx.ml`` ``TreeEnsemble*``); ``SVC`` (with and without
probabilities), ``SVR``, ``LinearSVC``; ``LogisticRegression`` with ``ZipMap`` and with
``zipmap=False``; naive Bayes, ``MLP*``, linear models, ``KMeans``; ``OneHotEncoder`` on
integers and strings, ``LabelEncoder``, ``ColumnTransformer``.

Every model is written at skl2onnx's newest tested opset (22 for skl2onnx 1.20). The stored
outputs are ONNX Runtime's on the file (``oracle="onnxruntime"``); the manifest records for
each file how scikit-learn's own outputs compare (``peer["framework"]``: skl2onnx computes
trees and SVMs in float32, which can move a score by 1e-7 relative) and how OpenVINO's own
ONNX frontend fares on it (``peer["openvino"]``).

Left out: ``Normalizer('max')``: ONNX Runtime divides each row by its largest value, while
scikit-learn, ``onnx.reference`` (so itergraph's NumPy backend) and OpenVINO's ONNX frontend
divide by the largest magnitude; the file has no single answer to store.
"""

from __future__ import annotations

import os
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
from skl2onnx import get_latest_tested_opset_version, to_onnx  # noqa: E402
from skl2onnx.common.data_types import (  # noqa: E402
    FloatTensorType,
    Int64TensorType,
    StringTensorType,
)
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.cross_decomposition import PLSRegression  # noqa: E402
from sklearn.decomposition import PCA, TruncatedSVD  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    AdaBoostClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    IsolationForest,
    RandomForestRegressor,
    StackingClassifier,
    VotingClassifier,
)
from sklearn.feature_selection import SelectKBest, VarianceThreshold  # noqa: E402
from sklearn.impute import KNNImputer, SimpleImputer  # noqa: E402
from sklearn.linear_model import (  # noqa: E402
    BayesianRidge,
    LinearRegression,
    LogisticRegression,
    Perceptron,
    Ridge,
    RidgeClassifier,
    SGDClassifier,
)
from sklearn.mixture import GaussianMixture  # noqa: E402
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline, make_union  # noqa: E402
from sklearn.preprocessing import (  # noqa: E402
    Binarizer,
    KBinsDiscretizer,
    LabelEncoder,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    RobustScaler,
    StandardScaler,
)
from sklearn.svm import SVC, SVR, LinearSVC, NuSVC, OneClassSVM  # noqa: E402
from sklearn.tree import (  # noqa: E402
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeRegressor,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_sklearn import as_matrix, compare, first_line, stable  # noqa: E402

warnings.filterwarnings("ignore")

NEWEST = get_latest_tested_opset_version()
#: ai.onnx.ml 3: left free, skl2onnx 1.20 writes IsolationForest's LabelEncoder at
#: ai.onnx.ml 4 and then refuses its own model
OPSETS = {"": NEWEST, "ai.onnx.ml": 3}
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


@dataclass
class Case:
    """One fitted model, its query and scikit-learn's outputs in the file's order."""

    name: str
    make: Callable[[], object]
    query: np.ndarray
    framework: Callable[[object, np.ndarray], list] | None
    description: str
    options: dict = field(default_factory=dict)
    initial_types: list | None = None
    tags: tuple[str, ...] = ()
    rtol: float = 1e-4
    atol: float = 1e-5


rs = np.random.RandomState(7)
X = rs.randn(40, 4).astype(np.float32)
XQ = np.random.RandomState(8).randn(6, 4).astype(np.float32)
Y3 = (X[:, 0] > 0.3).astype(np.int64) + (X[:, 1] > 0).astype(np.int64)
Y2 = (X[:, 0] + X[:, 2] > 0).astype(np.int64)
YR = (X @ np.array([1.0, -2.0, 0.5, 0.3]) + np.sin(3 * X[:, 0])).astype(np.float32)
XN = X.copy()
XN[np.random.RandomState(4).rand(*X.shape) < 0.15] = np.nan
XNQ = XQ.copy()
XNQ[0, 1] = XNQ[2, 3] = XNQ[2, 0] = XNQ[5, 2] = np.nan
XI = np.random.RandomState(9).randint(0, 4, size=(40, 3)).astype(np.int64)
XIQ = np.array([[0, 1, 2], [3, 3, 0], [1, 0, 1], [2, 2, 3]], np.int64)
WORDS = np.array(["red", "green", "blue", "teal"])
XS = WORDS[XI[:, :2]]
XSQ = WORDS[XIQ[:, :2]]
LABELS = np.array(["cat", "dog", "bird", "cow", "dog", "cat"])


def transform(est, x):
    out = est.transform(x)
    return [out.toarray() if hasattr(out, "toarray") else out]


def classify(est, x):
    return [est.predict(x), est.predict_proba(x)]


def regress(est, x):
    return [est.predict(x).reshape(len(x), -1)]


def fit(est, x=X, y=None):
    return lambda: est.fit(x) if y is None else est.fit(x, y)


NOZIP = {"zipmap": False}
FLOAT_IN = [("X", FloatTensorType([None, 4]))]
CASES = [
    # ---- scalers and other transformers ----
    Case("standard_scaler", fit(StandardScaler()), XQ, transform, "StandardScaler."),
    Case("minmax_scaler", fit(MinMaxScaler((-1, 2))), XQ, transform, "MinMaxScaler((-1, 2))."),
    Case("robust_scaler", fit(RobustScaler()), XQ, transform, "RobustScaler."),
    Case("maxabs_scaler", fit(MaxAbsScaler()), XQ, transform, "MaxAbsScaler."),
    Case("normalizer_l1", fit(Normalizer("l1")), XQ, transform, "Normalizer('l1')."),
    Case("binarizer", fit(Binarizer(threshold=0.2)), XQ, transform, "Binarizer(0.2)."),
    Case("polynomial_features", fit(PolynomialFeatures(2)), XQ, transform,
         "PolynomialFeatures(2)."),
    Case("simple_imputer_median", fit(SimpleImputer(strategy="median"), XN), XNQ, transform,
         "SimpleImputer(median) on rows with NaN."),
    Case("pca", fit(PCA(2)), XQ, transform, "PCA(2)."),
    Case("pca_whiten", fit(PCA(3, whiten=True)), XQ, transform, "PCA(3, whiten=True)."),
    Case("truncated_svd", fit(TruncatedSVD(2, random_state=0)), XQ, transform,
         "TruncatedSVD(2)."),
    Case("knn_imputer_two", fit(KNNImputer(n_neighbors=2), XN), XNQ,
         transform, "KNNImputer(2): model-local functions with If.",
         tags=("knn", "if")),
    # ---- neighbours in pipelines ----
    Case("pipeline_scaler_pca_knn_regressor",
         fit(make_pipeline(StandardScaler(), PCA(3), KNeighborsRegressor(3)), X, YR), XQ,
         regress, "StandardScaler -> PCA(3) -> KNeighborsRegressor(3).", tags=("knn", "scan")),
    Case("pipeline_pca_knn_classifier",
         fit(make_pipeline(PCA(3), KNeighborsClassifier(4)), X, Y3), XQ, classify,
         "PCA(3) -> KNeighborsClassifier(4), zipmap=False.", NOZIP, tags=("knn", "scan")),
    # ---- trees (ai.onnx.ml TreeEnsemble*) ----
    Case("decision_tree_classifier", fit(DecisionTreeClassifier(max_depth=4, random_state=0),
                                         X, Y3), XQ, classify,
         "DecisionTreeClassifier(max_depth=4), zipmap=False.", NOZIP, tags=("trees",)),
    Case("decision_tree_classifier_zipmap",
         fit(DecisionTreeClassifier(max_depth=3, random_state=0), X, Y3), XQ, classify,
         "DecisionTreeClassifier(max_depth=3), default zipmap=True: output_probability is a "
         "sequence of maps.", tags=("trees", "zipmap")),
    Case("decision_tree_regressor", fit(DecisionTreeRegressor(max_depth=5, random_state=0),
                                        X, YR), XQ, regress, "DecisionTreeRegressor(5).",
         tags=("trees",)),
    Case("random_forest_regressor",
         fit(RandomForestRegressor(5, max_depth=4, random_state=0), X, YR), XQ, regress,
         "RandomForestRegressor(5, max_depth=4).", tags=("trees",)),
    Case("extra_trees_classifier",
         fit(ExtraTreesClassifier(4, max_depth=3, random_state=0), X, Y3), XQ, classify,
         "ExtraTreesClassifier(4, max_depth=3), zipmap=False.", NOZIP, tags=("trees",)),
    Case("gradient_boosting_classifier",
         fit(GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0), X, Y2),
         XQ, classify, "GradientBoostingClassifier(5, binary), zipmap=False.", NOZIP,
         tags=("trees",)),
    Case("gradient_boosting_regressor",
         fit(GradientBoostingRegressor(n_estimators=6, max_depth=2, random_state=0), X, YR),
         XQ, regress, "GradientBoostingRegressor(6).", tags=("trees",)),
    Case("isolation_forest", fit(IsolationForest(n_estimators=4, random_state=0)), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)],
         "IsolationForest(4): label and score.", tags=("trees",)),
    # ---- SVMs ----
    Case("svc_rbf", fit(SVC(), X, Y3), XQ, None,
         "SVC(rbf) without probabilities: label and the ovr decision scores.", NOZIP,
         tags=("svm",)),
    Case("svc_linear_proba", fit(SVC(kernel="linear", probability=True, random_state=0),
                                 X, Y2), XQ, None,
         "SVC(linear, probability=True), zipmap=False.", NOZIP, tags=("svm",)),
    Case("svr", fit(SVR(C=2.0), X, YR), XQ, regress, "SVR(rbf, C=2).", tags=("svm",)),
    Case("linear_svc", fit(LinearSVC(random_state=0), X, Y3), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)],
         "LinearSVC: label and decision scores.", tags=("svm",)),
    # ---- linear models ----
    Case("logistic_regression_multiclass_zipmap", fit(LogisticRegression(), X, Y3), XQ,
         classify, "LogisticRegression (3 classes), default zipmap=True.", tags=("zipmap",)),
    Case("logistic_regression_multiclass", fit(LogisticRegression(), X, Y3), XQ, classify,
         "LogisticRegression (3 classes), zipmap=False.", NOZIP),
    Case("logistic_regression_binary", fit(LogisticRegression(C=0.5), X, Y2), XQ, classify,
         "LogisticRegression (2 classes), zipmap=False.", NOZIP),
    Case("linear_regression", fit(LinearRegression(), X, YR), XQ, regress, "LinearRegression."),
    Case("ridge", fit(Ridge(alpha=0.5), X, np.stack([YR, X[:, 0]], 1)), XQ, regress,
         "Ridge, two targets."),
    Case("gaussian_nb", fit(GaussianNB(), X, Y3), XQ, classify, "GaussianNB, zipmap=False.",
         NOZIP),
    Case("bernoulli_nb", fit(BernoulliNB(binarize=0.0), X, Y3), XQ, classify,
         "BernoulliNB, zipmap=False.", NOZIP),
    Case("mlp_classifier", fit(MLPClassifier((8,), max_iter=300, random_state=0), X, Y3), XQ,
         classify, "MLPClassifier((8,)), zipmap=False.", NOZIP),
    Case("mlp_regressor",
         fit(MLPRegressor(hidden_layer_sizes=(8, 4), max_iter=300, random_state=0), X, YR),
         XQ, regress, "MLPRegressor((8, 4))."),
    Case("kmeans", fit(KMeans(3, n_init=2, random_state=0)), XQ,
         lambda e, x: [e.predict(x), e.transform(x)], "KMeans(3): label and distances."),
    # ---- encoders and column transformers ----
    Case("one_hot_encoder_int", fit(OneHotEncoder(handle_unknown="ignore"), XI), XIQ,
         transform, "OneHotEncoder on int64 columns.",
         initial_types=[("X", Int64TensorType([None, 3]))], tags=("encoder",)),
    Case("one_hot_encoder_strings", fit(OneHotEncoder(), XS), XSQ, transform,
         "OneHotEncoder on string columns.",
         initial_types=[("X", StringTensorType([None, 2]))], tags=("encoder", "strings")),
    Case("label_encoder", fit(LabelEncoder(), LABELS), np.array(["dog", "cow", "cat"]),
         transform, "LabelEncoder on strings: a 1-D string input.",
         initial_types=[("X", StringTensorType([None]))], tags=("encoder", "strings")),
    Case("column_transformer",
         fit(make_pipeline(ColumnTransformer([("scale", StandardScaler(), [0, 1]),
                                              ("pca", PCA(1), [2, 3])]),
                           LogisticRegression()), X, Y3), XQ, classify,
         "ColumnTransformer(StandardScaler on 0-1, PCA(1) on 2-3) -> LogisticRegression, "
         "zipmap=False.", NOZIP, tags=("pipeline",)),
    Case("column_transformer_passthrough",
         fit(ColumnTransformer([("bin", Binarizer(), [0]), ("keep", "passthrough", [1, 3])])),
         XQ, transform, "ColumnTransformer(Binarizer on 0, passthrough 1 and 3).",
         tags=("pipeline",)),
    # ---- more ensembles, linear and probabilistic models, feature pipelines ----
    Case("hist_gradient_boosting_classifier",
         fit(HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0), X, Y3),
         XQ, classify, "HistGradientBoostingClassifier(5 iterations, 3 classes), zipmap=False.",
         NOZIP, tags=("trees",)),
    Case("hist_gradient_boosting_regressor",
         fit(HistGradientBoostingRegressor(max_iter=6, random_state=0), X, YR), XQ, regress,
         "HistGradientBoostingRegressor(6 iterations).", tags=("trees",)),
    Case("adaboost_classifier",
         fit(AdaBoostClassifier(n_estimators=4, random_state=0), X, Y3), XQ, classify,
         "AdaBoostClassifier(4 stumps), zipmap=False.", NOZIP, tags=("trees",)),
    Case("bagging_extra_tree_regressor",
         fit(BaggingRegressor(ExtraTreeRegressor(max_depth=3, random_state=0), n_estimators=3,
                              random_state=0), X, YR), XQ, regress,
         "BaggingRegressor of 3 ExtraTreeRegressors.", tags=("trees",)),
    Case("voting_soft", fit(VotingClassifier([("lr", LogisticRegression()),
                                              ("nb", GaussianNB())], voting="soft",
                                             flatten_transform=False), X, Y3),
         XQ, classify, "VotingClassifier(soft: LogisticRegression, GaussianNB), zipmap=False.",
         NOZIP),
    Case("stacking_classifier",
         fit(StackingClassifier([("lr", LogisticRegression()),
                                 ("dt", DecisionTreeClassifier(max_depth=2, random_state=0))],
                                LogisticRegression()), X, Y2), XQ, classify,
         "StackingClassifier(LogisticRegression, DecisionTree -> LogisticRegression), "
         "zipmap=False.", NOZIP),
    Case("calibrated_linear_svc",
         fit(CalibratedClassifierCV(LinearSVC(random_state=0), cv=3), X, Y2), XQ, classify,
         "CalibratedClassifierCV(LinearSVC, sigmoid, cv=3), zipmap=False.", NOZIP),
    Case("nu_svc", fit(NuSVC(nu=0.3), X, Y3), XQ, None,
         "NuSVC(nu=0.3): label and scores, zipmap=False.", NOZIP, tags=("svm",)),
    Case("one_class_svm", fit(OneClassSVM(nu=0.2, gamma=0.5)), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)], "OneClassSVM: label and score.",
         tags=("svm",)),
    Case("sgd_classifier", fit(SGDClassifier(random_state=0), X, Y3), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)],
         "SGDClassifier (hinge), zipmap=False: label and scores.", NOZIP),
    Case("perceptron", fit(Perceptron(random_state=0), X, Y2), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)],
         "Perceptron (binary), zipmap=False: label and the two classes' scores.", NOZIP),
    Case("ridge_classifier", fit(RidgeClassifier(), X, Y3), XQ,
         lambda e, x: [e.predict(x), e.decision_function(x)], "RidgeClassifier (3 classes)."),
    Case("bayesian_ridge", fit(BayesianRidge(), X, YR), XQ, regress, "BayesianRidge."),
    Case("pls_regression", fit(PLSRegression(2), X, YR), XQ, regress, "PLSRegression(2)."),
    Case("lda", fit(LinearDiscriminantAnalysis(), X, Y3), XQ, classify,
         "LinearDiscriminantAnalysis, zipmap=False.", NOZIP),
    Case("multinomial_nb", fit(MultinomialNB(), np.abs(X), Y3), np.abs(XQ), classify,
         "MultinomialNB on |X|, zipmap=False.", NOZIP),
    Case("gaussian_mixture", fit(GaussianMixture(2, random_state=0)), XQ,
         lambda e, x: [e.predict(x), e.predict_proba(x)], "GaussianMixture(2, full)."),
    Case("kbins_onehot", fit(KBinsDiscretizer(3, encode="onehot-dense")), XQ, transform,
         "KBinsDiscretizer(3, one-hot dense)."),
    Case("kbins_ordinal", fit(KBinsDiscretizer(4, encode="ordinal", strategy="uniform")), XQ,
         transform, "KBinsDiscretizer(4, ordinal, uniform)."),
    Case("power_transformer", fit(PowerTransformer()), XQ, transform,
         "PowerTransformer (Yeo-Johnson, standardized)."),
    Case("ordinal_encoder_strings", fit(OrdinalEncoder(), XS), XSQ, transform,
         "OrdinalEncoder on string columns.",
         initial_types=[("X", StringTensorType([None, 2]))], tags=("encoder", "strings")),
    Case("feature_union_select",
         fit(make_pipeline(make_union(PCA(2), SelectKBest(k=2)), VarianceThreshold(0.01),
                           LogisticRegression()), X, Y3), XQ, classify,
         "FeatureUnion(PCA(2), SelectKBest(2)) -> VarianceThreshold -> LogisticRegression, "
         "zipmap=False.", NOZIP, tags=("pipeline",)),
]


def convert(case: Case, est):
    """skl2onnx's file for `est` (options given to the last estimator of a pipeline)."""
    last = est.steps[-1][1] if hasattr(est, "steps") else est
    opts = {id(last): case.options} if case.options else None
    if case.initial_types:
        model = to_onnx(est, initial_types=case.initial_types, target_opset=OPSETS,
                        options=opts)
    else:
        model = to_onnx(est, case.query[:1], target_opset=OPSETS, options=opts)
    return stable(model)


def run_ort(path: Path, feeds: dict) -> list:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_ov(path: Path, feeds: dict) -> list:
    compiled = ov.Core().compile_model(str(path), "CPU", OV_CONFIG)
    result = compiled(feeds)
    return [np.asarray(result[o]) for o in compiled.outputs]


def peer(fn, path, feeds, want, rtol, atol) -> str:
    try:
        return compare(fn(path, feeds), want, rtol, atol)
    except Exception as e:  # noqa: BLE001 - a peer's refusal is recorded, not raised
        return "error: " + first_line(e)


def framework_agrees(case: Case, est, want: list) -> str:
    """How scikit-learn's own outputs compare with ONNX Runtime's on the file."""
    if case.framework is None:
        return "not compared"
    raw = case.framework(est, case.query)
    fitted = []
    for v, w in zip(raw, want):
        v = np.asarray(v)
        fitted.append(v.reshape(w.shape).astype(w.dtype) if v.size == w.size else v)
    return compare(fitted, want, 1e-3, 1e-4)


def add(corpus: Corpus, case: Case) -> str:
    est = case.make()
    model = convert(case, est)
    path = corpus.path(case.name, ".onnx")
    onnx.save(model, path)
    feeds = {model.graph.input[0].name: case.query}
    want = [as_matrix(v) for v in run_ort(path, feeds)]
    peers = {"framework": framework_agrees(case, est, want),
             "openvino": peer(run_ov, path, feeds, want, case.rtol, case.atol)}
    corpus.add(case.name, path, feeds, want, converter="skl2onnx", opset=NEWEST,
               oracle="onnxruntime", rtol=case.rtol, atol=case.atol, tags=case.tags,
               description=case.description,
               output_names=[o.name for o in model.graph.output], peer=peers)
    return f"{case.name}: {peers}"


def main() -> None:
    versions = {"scikit-learn": sklearn.__version__, "skl2onnx": skl2onnx.__version__,
                "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "openvino": ov.__version__, "numpy": np.__version__}
    corpus = Corpus("sklearn-unseen", versions)
    for case in CASES:
        try:
            print(add(corpus, case))
        except Exception as e:  # noqa: BLE001 - a model skl2onnx refuses is reported
            print(f"{case.name}: left out: {first_line(e)}")
    corpus.save()
    print(f"\n{len(corpus.models)} sklearn-unseen entries")


if __name__ == "__main__":
    main()
