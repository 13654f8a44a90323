"""``ai.onnx.ml`` operators written to OpenVINO IR (`frontends/openvino/export_ml.py`,
`export_trees.py`): OpenVINO's CPU plugin on itergraph's IR against ONNX Runtime on the
original file, labels and integer outputs exactly, scores to 1e-5.

Models: scikit-learn models converted by skl2onnx (`data/sklearn_ml/gen.py`), and models
built with onnx.helper for the edge cases skl2onnx does not write: every post_transform,
two-class and multi-class layouts, multi-target regressors, node comparisons other than
``BRANCH_LEQ``, missing values (NaN) sent to either child, float64 features (ONNX Runtime
has no tree kernel for integer features)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from ov_helpers import run_ov

import itergraph as ig

DATA = Path(__file__).parent / "data" / "sklearn_ml"
ML = "ai.onnx.ml"
POST = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"]
rng = np.random.default_rng(7)


def _ort(m: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in s.run(None, feeds)]


def _ov(m: onnx.ModelProto, feeds: dict, tmp_path: Path) -> list[np.ndarray]:
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    return run_ov(xml, feeds)


def _agree(m: onnx.ModelProto, feeds: dict, tmp_path: Path) -> None:
    want = _ort(m, feeds)
    got = _ov(m, feeds, tmp_path)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape}, ONNX Runtime {b.shape}"
        if b.dtype == object or b.dtype.kind in "biuU":
            np.testing.assert_array_equal(a.astype(b.dtype) if b.dtype != object
                                          else a.astype(str), b.astype(a.dtype)
                                          if b.dtype != object else b.astype(str),
                                          err_msg=f"output {i}")
        else:
            assert a.dtype == b.dtype, f"output {i}: {a.dtype}, ONNX Runtime {b.dtype}"
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"output {i}")


def _model(nodes, x_type, x_shape, outputs) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", x_type, x_shape)], outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ML, 3)],
                     ir_version=9)
    onnx.checker.check_model(m)
    return m


def _out(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


# -- scikit-learn models ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.onnx")))
def test_sklearn_model(name, tmp_path):
    m = onnx.load(DATA / f"{name}.onnx")
    assert any(n.domain == ML for n in m.graph.node)
    feeds = {"X": np.load(DATA / f"{name}.npz")["X"]}
    _agree(m, feeds, tmp_path)


# -- preprocessing -----------------------------------------------------------------------------
X4 = np.array([[1.5, -2.0, 0.0, 4.0], [0.0, 0.0, 0.0, 0.0], [-3.0, -1.0, -0.5, -2.0],
               [2.0, 7.0, np.nan, 1.0]], np.float32)


@pytest.mark.parametrize("elem,np_type", [(T.FLOAT, np.float32), (T.DOUBLE, np.float64),
                                          (T.INT64, np.int64)])
@pytest.mark.parametrize("per_column", [True, False])
def test_scaler(elem, np_type, per_column, tmp_path):
    offset, scale = ([0.5, -1.0, 2.0, 0.0], [2.0, 0.5, -1.0, 3.0]) if per_column else \
        ([0.25], [1.5])
    node = h.make_node("Scaler", ["X"], ["Y"], domain=ML, offset=offset, scale=scale)
    m = _model([node], elem, [None, 4], [_out("Y", T.FLOAT, [None, 4])])
    x = np.nan_to_num(X4).astype(np_type)
    _agree(m, {"X": x}, tmp_path)


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm, tmp_path):
    node = h.make_node("Normalizer", ["X"], ["Y"], domain=ML, norm=norm)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 4])])
    _agree(m, {"X": np.nan_to_num(X4)}, tmp_path)  # a zero row, a row all negative


def test_binarizer(tmp_path):
    node = h.make_node("Binarizer", ["X"], ["Y"], domain=ML, threshold=0.0)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 4])])
    _agree(m, {"X": np.nan_to_num(X4)}, tmp_path)


@pytest.mark.parametrize("replaced", [float("nan"), 0.0])
def test_imputer_float(replaced, tmp_path):
    node = h.make_node("Imputer", ["X"], ["Y"], domain=ML,
                       imputed_value_floats=[9.0, 8.0, 7.0, 6.0], replaced_value_float=replaced)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 4])])
    _agree(m, {"X": X4}, tmp_path)


def test_imputer_int64(tmp_path):
    node = h.make_node("Imputer", ["X"], ["Y"], domain=ML, imputed_value_int64s=[-5],
                       replaced_value_int64=0)
    m = _model([node], T.INT64, [None, 4], [_out("Y", T.INT64, [None, 4])])
    _agree(m, {"X": np.nan_to_num(X4).astype(np.int64)}, tmp_path)


@pytest.mark.parametrize("data,indices", [
    (rng.normal(size=(3, 5)).astype(np.float32), np.array([4, 0, 4], np.int64)),
    (rng.normal(size=(2, 3, 5)).astype(np.float32), np.array([[1, 3]], np.int64)),
    (np.arange(6, dtype=np.int64) * 10, np.array([[5, 0], [2, 2], [1, 3]], np.int64)),
    (np.array(["a", "bb", "ccc"], object), np.array([[2, 0], [1, 1]], np.int64)),
], ids=["2d", "3d", "1d-int", "strings"])
def test_array_feature_extractor(data, indices, tmp_path):
    elem = T.STRING if data.dtype == object else onnx.helper.np_dtype_to_tensor_dtype(data.dtype)
    init = onnx.numpy_helper.from_array(data, "data") if data.dtype != object else \
        h.make_tensor("data", T.STRING, data.shape, [s.encode() for s in data])
    node = h.make_node("ArrayFeatureExtractor", ["data", "X"], ["Y"], domain=ML)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.INT64, indices.shape)],
                     [_out("Y", elem)], [init])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ML, 3)],
                     ir_version=9)
    _agree(m, {"X": indices}, tmp_path)


# -- linear models ----------------------------------------------------------------------------
XL = rng.normal(size=(7, 3)).astype(np.float32)
XL[3] = 0.0  # a row of zero scores: ties and SOFTMAX_ZERO's zero case


@pytest.mark.parametrize("targets,intercepts", [(1, [0.5]), (3, [0.1, -0.2, 0.3]), (2, None)])
def test_linear_regressor(targets, intercepts, tmp_path):
    attrs = {"coefficients": rng.normal(size=targets * 3).astype(float).tolist(),
             "targets": targets}
    if intercepts is not None:
        attrs["intercepts"] = intercepts
    node = h.make_node("LinearRegressor", ["X"], ["Y"], domain=ML, **attrs)
    m = _model([node], T.FLOAT, [None, 3], [_out("Y", T.FLOAT, [None, targets])])
    _agree(m, {"X": XL}, tmp_path)


def _linear_classifier(rows: int, labels, post: str, intercepts=None) -> onnx.ModelProto:
    coef = rng.normal(size=rows * 3).round(2).tolist()
    kind = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints"
    node = h.make_node("LinearClassifier", ["X"], ["Y", "Z"], domain=ML, coefficients=coef,
                       intercepts=intercepts or [0.0] * rows, post_transform=post,
                       **{kind: labels})
    label = T.STRING if isinstance(labels[0], str) else T.INT64
    return _model([node], T.FLOAT, [None, 3], [_out("Y", label, [None]),
                                               _out("Z", T.FLOAT, [None, None])])


@pytest.mark.parametrize("post", POST)
@pytest.mark.parametrize("rows,labels", [(1, [3, 7]), (2, [0, 1]), (3, [4, 5, 6]),
                                         (1, ["no", "yes"]), (4, ["a", "b", "c", "d"])],
                         ids=["binary-1row", "binary-2rows", "3class", "binary-strings",
                              "4class-strings"])
def test_linear_classifier(post, rows, labels, tmp_path):
    _agree(_linear_classifier(rows, labels, post), {"X": XL}, tmp_path)


# -- tree ensembles ---------------------------------------------------------------------------
def _random_trees(n_trees: int, features: int, modes=("BRANCH_LEQ",), missing=False,
                  max_depth: int = 4):
    """Node attributes of `n_trees` random trees (unbalanced, depth up to `max_depth`), and
    the (tree, node) of each leaf."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values",
                         "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_missing_value_tracks_true")}
    leaves = []
    for t in range(n_trees):
        count = [0]

        def grow(depth, t=t, count=count):
            nid = count[0]
            count[0] += 1
            slot = len(a["nodes_nodeids"])
            for k in a:
                a[k].append(0)
            a["nodes_treeids"][slot], a["nodes_nodeids"][slot] = t, nid
            if depth == max_depth or (depth > 0 and rng.random() < 0.3):
                a["nodes_modes"][slot] = "LEAF"
                a["nodes_values"][slot] = 0.0
                leaves.append((t, nid))
                return nid
            a["nodes_modes"][slot] = str(rng.choice(modes))
            a["nodes_featureids"][slot] = int(rng.integers(features))
            a["nodes_values"][slot] = round(float(rng.normal()), 1)
            a["nodes_missing_value_tracks_true"][slot] = int(missing and rng.random() < 0.5)
            a["nodes_truenodeids"][slot] = grow(depth + 1)
            a["nodes_falsenodeids"][slot] = grow(depth + 1)
            return nid

        grow(0)
    if not missing:
        del a["nodes_missing_value_tracks_true"]
    return a, leaves


def _features(n: int = 40, features: int = 4, nan: bool = False) -> np.ndarray:
    x = rng.normal(size=(n, features)).round(1).astype(np.float32)  # hits the thresholds
    if nan:
        x[::3, 1] = np.nan
        x[1::4, 2] = np.nan
    return x


@pytest.mark.parametrize("agg", ["SUM", "AVERAGE"])
@pytest.mark.parametrize("targets,base", [(1, None), (3, [0.5, -1.0, 2.0])])
@pytest.mark.parametrize("variant", ["leq", "all-modes", "missing"])
def test_tree_regressor(agg, targets, base, variant, tmp_path):
    modes = ("BRANCH_LEQ",) if variant != "all-modes" else \
        ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
    a, leaves = _random_trees(5, 4, modes, missing=variant == "missing")
    tw = {"target_treeids": [], "target_nodeids": [], "target_ids": [], "target_weights": []}
    for t, n in leaves:
        for k in range(targets):
            for key, v in zip(tw, (t, n, k, round(float(rng.normal()), 2))):
                tw[key].append(v)
    extra = {"base_values": base} if base else {}
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=targets,
                       aggregate_function=agg, **a, **tw, **extra)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, targets])])
    _agree(m, {"X": _features(nan=variant == "missing")}, tmp_path)


def test_tree_regressor_double_features(tmp_path):
    a, leaves = _random_trees(3, 4)
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=1,
                       target_treeids=[t for t, _ in leaves],
                       target_nodeids=[n for _, n in leaves], target_ids=[0] * len(leaves),
                       target_weights=[float(i) for i in range(len(leaves))], **a)
    m = _model([node], T.DOUBLE, [None, 4], [_out("Y", T.FLOAT, [None, 1])])
    _agree(m, {"X": _features().astype(np.float64)}, tmp_path)


def _tree_classifier(labels, post, ids, weight, base=None, nan=False) -> onnx.ModelProto:
    a, leaves = _random_trees(4, 4, missing=nan)
    cw = {"class_treeids": [], "class_nodeids": [], "class_ids": [], "class_weights": []}
    for t, n in leaves:
        for k in ids(len(labels)):
            for key, v in zip(cw, (t, n, k, weight())):
                cw[key].append(v)
    kind = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_int64s"
    extra = {"base_values": base} if base else {}
    node = h.make_node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], domain=ML,
                       post_transform=post, **{kind: labels}, **a, **cw, **extra)
    label = T.STRING if isinstance(labels[0], str) else T.INT64
    return _model([node], T.FLOAT, [None, 4], [_out("Y", label, [None]),
                                               _out("Z", T.FLOAT, [None, None])])


def _every(c):
    return range(c)


def _some(c):
    return sorted(set(rng.choice(c, size=2).tolist()))  # a leaf scores one or two classes


def _positive():
    return round(float(rng.random()), 2)


def _mixed():
    return round(float(rng.normal()), 2)


@pytest.mark.parametrize("post", POST)
@pytest.mark.parametrize("case", ["every-class", "base-values", "some-classes", "strings",
                                  "missing"])
def test_tree_classifier_multiclass(post, case, tmp_path):
    labels = ["p", "q", "r"] if case == "strings" else [2, 4, 6]
    ids = _some if case == "some-classes" else _every
    base = [0.1, -0.2, 0.3] if case == "base-values" else None
    m = _tree_classifier(labels, post, ids, _mixed, base, nan=case == "missing")
    _agree(m, {"X": _features(nan=case == "missing")}, tmp_path)


@pytest.mark.parametrize("post", POST)
@pytest.mark.parametrize("weights", ["positive", "mixed"])
@pytest.mark.parametrize("base", [None, [0.25]])
@pytest.mark.parametrize("labels", [[0, 1], [3, 7], ["no", "yes"]], ids=str)
def test_tree_classifier_binary(post, weights, base, labels, tmp_path):
    m = _tree_classifier(labels, post, lambda c: [0],
                         _positive if weights == "positive" else _mixed, base)
    _agree(m, {"X": _features()}, tmp_path)


# -- refusals ---------------------------------------------------------------------------------
def _refused(m: onnx.ModelProto, tmp_path: Path, words: str) -> None:
    with pytest.raises(ig.UnsupportedError, match=words):
        ig.load(m).save(tmp_path / "m.xml")


def test_tree_regressor_min_is_refused(tmp_path):
    a, leaves = _random_trees(2, 4)
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=1,
                       aggregate_function="MIN", target_treeids=[t for t, _ in leaves],
                       target_nodeids=[n for _, n in leaves], target_ids=[0] * len(leaves),
                       target_weights=[1.0] * len(leaves), name="forest", **a)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 1])])
    _refused(m, tmp_path, "TreeEnsembleRegressor node 'forest'.*aggregate_function MIN")


def test_two_classes_scored_each_are_refused(tmp_path):
    # ONNX Runtime labels these rows 0/1 whatever the class labels are
    m = _tree_classifier([3, 7], "NONE", _every, _positive)
    m.graph.node[0].name = "two"
    _refused(m, tmp_path, "TreeEnsembleClassifier node 'two'.*2 class labels")
    assert not set(_ort(m, {"X": _features()})[0].tolist()) <= {3, 7}


def test_probit_is_refused(tmp_path):
    m = _linear_classifier(3, [0, 1, 2], "PROBIT")
    m.graph.node[0].name = "lin"
    _refused(m, tmp_path, "LinearClassifier node 'lin'.*PROBIT")


def test_cast_1_names_its_type(tmp_path):
    # skl2onnx's opset-1 files hold Cast-1, whose ``to`` is a type name, not a code
    node = h.make_node("Cast", ["X"], ["Y"], to="INT64")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, [None, 4])],
                     [_out("Y", T.INT64, [None, 4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 1)], ir_version=3)
    x = np.nan_to_num(X4) * 2.5
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = run_ov(xml, {"X": x})[0]
    np.testing.assert_array_equal(got, x.astype(np.int64))
    np.testing.assert_array_equal(got, ig.load(m).run({"X": x})["Y"])


def test_zipmap_is_refused_with_the_way_out(tmp_path):
    node = h.make_node("ZipMap", ["X"], ["Z"], domain=ML, classlabels_int64s=[0, 1, 2],
                       name="zm")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                     [h.make_value_info("Z", h.make_sequence_type_proto(h.make_map_type_proto(
                         T.INT64, h.make_tensor_type_proto(T.FLOAT, []))))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ML, 1)],
                     ir_version=9)
    _refused(m, tmp_path, "ZipMap node 'zm'.*zipmap")


@pytest.mark.parametrize("op", ["LinearRegressor", "LinearClassifier"])
def test_one_dimensional_features_are_one_row(op, tmp_path):
    if op == "LinearRegressor":
        node = h.make_node(op, ["X"], ["Y"], domain=ML, coefficients=rng.normal(size=8).tolist(),
                           targets=2)
        outputs = [_out("Y", T.FLOAT, [None, 2])]
    else:
        node = h.make_node(op, ["X"], ["Y", "Z"], domain=ML,
                           coefficients=rng.normal(size=12).tolist(), intercepts=[0.0] * 3,
                           classlabels_ints=[1, 2, 3])
        outputs = [_out("Y", T.INT64, [None]), _out("Z", T.FLOAT, [None, 3])]
    m = _model([node], T.FLOAT, [4], outputs)
    _agree(m, {"X": _features(1)[0]}, tmp_path)


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID", "no-supports"])
def test_svm_regressor(kernel, tmp_path):
    attrs = {"kernel_params": [0.3, 0.5, 2.0], "rho": [0.25], "post_transform": "NONE"}
    if kernel == "no-supports":  # a linear machine: the coefficients weigh the features
        attrs.update(coefficients=[0.5, -1.0, 2.0], n_supports=0, kernel_type="LINEAR")
    else:
        attrs.update(coefficients=rng.normal(size=5).tolist(), n_supports=5,
                     support_vectors=rng.normal(size=15).tolist(), kernel_type=kernel)
    node = h.make_node("SVMRegressor", ["X"], ["Y"], domain=ML, **attrs)
    m = _model([node], T.FLOAT, [None, 3], [_out("Y", T.FLOAT, [None, 1])])
    _agree(m, {"X": XL}, tmp_path)


def test_tree_cycle_is_refused(tmp_path):
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=1,
                       nodes_treeids=[0, 0], nodes_nodeids=[0, 1], nodes_featureids=[0, 0],
                       nodes_values=[0.0, 0.0], nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ"],
                       nodes_truenodeids=[1, 0], nodes_falsenodeids=[1, 0],
                       target_treeids=[0], target_nodeids=[1], target_ids=[0],
                       target_weights=[1.0], name="loopy")
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 1])])
    _refused(m, tmp_path, "TreeEnsembleRegressor node 'loopy'.*cycle")


def test_tree_lists_of_other_lengths_are_refused(tmp_path):
    a, leaves = _random_trees(2, 4)
    a["nodes_values"] = a["nodes_values"][:-1]
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=1,
                       target_treeids=[t for t, _ in leaves],
                       target_nodeids=[n for _, n in leaves], target_ids=[0] * len(leaves),
                       target_weights=[1.0] * len(leaves), name="short", **a)
    m = _model([node], T.FLOAT, [None, 4], [_out("Y", T.FLOAT, [None, 1])])
    with pytest.raises(ig.ModelError, match="node 'short'.*must have one length.*nodes_values"):
        ig.load(m).save(tmp_path / "m.xml")
