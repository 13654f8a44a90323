"""Translators of OpenVINO's SSD post-processing layers into ops of the ``org.openvinotoolkit``
domain in the form OpenVINO's ONNX frontend reads (semantics in `backends.common.prior_box`,
`backends.common.detection_output`, `backends.common.proposal`).

``PriorBox-1/8`` and ``PriorBoxClustered-1`` take the feature-map and image sizes as two 1-D
tensors ``[H, W]``; the ONNX form takes two tensors whose dims 2 and 3 are those sizes and has
an extra leading axis of 1. The sizes become a ``[1, 1, H, W]`` uint8 ``ConstantOfShape`` each
and the result is squeezed back to ``[2, 4*H*W*P]``.

``DetectionOutput-1/8`` keep their inputs and attributes; ``keep_top_k`` becomes its first
value (the one OpenVINO uses), ``code_type`` its full name. Version 1's ``num_classes`` must
agree with the shapes (the ONNX form derives the count from them).

``Proposal-1/4`` become ``Proposal`` with both outputs (rois and scores; version 1 uses the
first). OpenVINO's ONNX frontend has no Proposal, so an ONNX copy holding it runs in itergraph
only.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType, TensorType
from ...builder import Builder, shape_of
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, F32, U8 = DataType.INT64, DataType.FLOAT32, DataType.UINT8


def floats_attr(layer: Layer, key: str, default=None) -> list[float]:
    s = layer.attr(key)
    if s is None or not s.strip():
        return list(default or [])
    try:
        return [float(t) for t in s.replace(" ", "").split(",") if t]
    except ValueError:
        raise ModelError(f"{layer.where()}: attribute {key}='{s}' is not a list of numbers") \
            from None


def _sized(b: Builder, v):
    """A ``[1, 1, H, W]`` uint8 tensor of zeros from the 1-D ``[H, W]`` tensor `v`."""
    c = b.value_of(v)
    if c is not None:
        shape = b.i64([1, 1, *np.asarray(c).reshape(-1).astype(np.int64)])
    else:
        shape = b.op("Concat", [b.i64([1, 1]), b.i64_vector(v)], {"axis": 0}, dtype=I64)
    out = b.op("ConstantOfShape", [shape], {"value": np.zeros(1, np.uint8)}, dtype=U8)
    if c is not None:
        out.type = TensorType(U8, (1, 1, *(int(d) for d in np.asarray(c).reshape(-1))))
    return out


def _priors(b: Builder, layer: Layer, x, op_type: str, attrs: dict):
    if len(x) != 2:
        raise ModelError(f"{layer.where()}: {op_type} takes 2 inputs, got {len(x)}")
    for i, v in enumerate(x):
        c = b.value_of(v)
        if c is not None and np.asarray(c).size != 2:
            raise ModelError(f"{layer.where()}: input {i} has {np.asarray(c).size} values "
                             "(the sizes [H, W])")
    attrs = {k: v for k, v in attrs.items() if not (isinstance(v, list) and not v)}
    y = b.op(op_type, [_sized(b, x[0]), _sized(b, x[1])], attrs, dtype=F32, domain=DOMAIN)
    return b.squeeze(y, [0])


def _prior_box(b: Builder, layer: Layer, x, version: int):
    a = {"min_size": floats_attr(layer, "min_size"), "max_size": floats_attr(layer, "max_size"),
         "aspect_ratio": floats_attr(layer, "aspect_ratio"),
         "flip": int(layer.bool_attr("flip")), "clip": int(layer.bool_attr("clip")),
         "step": layer.float_attr("step", 0.0), "offset": layer.float_attr("offset", 0.0),
         "variance": floats_attr(layer, "variance"),
         "scale_all_sizes": int(layer.bool_attr("scale_all_sizes", True)),
         "fixed_ratio": floats_attr(layer, "fixed_ratio"),
         "fixed_size": floats_attr(layer, "fixed_size"),
         "density": floats_attr(layer, "density"),
         "min_max_aspect_ratios_order": int(version < 8 or layer.bool_attr(
             "min_max_aspect_ratios_order", True))}
    if len(a["variance"]) not in (0, 1, 4):
        raise ModelError(f"{layer.where()}: {len(a['variance'])} variance values (1 or 4)")
    if a["density"] and len(a["density"]) != len(a["fixed_size"]):
        raise ModelError(f"{layer.where()}: {len(a['density'])} densities for "
                         f"{len(a['fixed_size'])} fixed sizes")
    return _priors(b, layer, x, "PriorBox", a)


@importer("PriorBox", since=1)
def _prior_box1(b: Builder, layer: Layer, x):
    return _prior_box(b, layer, x, 1)


@importer("PriorBox", since=8)
def _prior_box8(b: Builder, layer: Layer, x):
    return _prior_box(b, layer, x, 8)


@importer("PriorBoxClustered", since=1)
def _prior_box_clustered(b: Builder, layer: Layer, x):
    a = {"width": floats_attr(layer, "width"), "height": floats_attr(layer, "height"),
         "clip": int(layer.bool_attr("clip", True)),
         "step_w": layer.float_attr("step_w", 0.0), "step_h": layer.float_attr("step_h", 0.0),
         "step": layer.float_attr("step", 0.0), "offset": layer.float_attr("offset", 0.0),
         "variance": floats_attr(layer, "variance")}
    if len(a["width"]) != len(a["height"]):
        raise ModelError(f"{layer.where()}: {len(a['width'])} widths and "
                         f"{len(a['height'])} heights")
    if len(a["variance"]) not in (0, 1, 4):
        raise ModelError(f"{layer.where()}: {len(a['variance'])} variance values (1 or 4)")
    return _priors(b, layer, x, "PriorBoxClustered", a)


_CODE_TYPES = ("caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE")


def _detection_output(b: Builder, layer: Layer, x, version: int):
    if len(x) not in (3, 5):
        raise ModelError(f"{layer.where()}: DetectionOutput takes 3 or 5 inputs, got {len(x)}")
    code = (layer.attr("code_type") or _CODE_TYPES[0]).strip()
    if not code.startswith("caffe.PriorBoxParameter."):
        code = "caffe.PriorBoxParameter." + code
    if code not in _CODE_TYPES:
        raise ModelError(f"{layer.where()}: code_type '{code}' is not CORNER or CENTER_SIZE")
    keep = layer.ints_attr("keep_top_k", [-1]) or [-1]
    a = {"background_label_id": layer.int_attr("background_label_id", 0),
         "top_k": layer.int_attr("top_k", -1),
         "variance_encoded_in_target": int(layer.bool_attr("variance_encoded_in_target")),
         "keep_top_k": keep[0], "code_type": code,
         "share_location": int(layer.bool_attr("share_location", True)),
         "nms_threshold": layer.float_attr("nms_threshold", 0.0),
         "confidence_threshold": layer.float_attr("confidence_threshold", 0.0),
         "clip_after_nms": int(layer.bool_attr("clip_after_nms")),
         "clip_before_nms": int(layer.bool_attr("clip_before_nms")),
         "decrease_label_id": int(layer.bool_attr("decrease_label_id")),
         "normalized": int(layer.bool_attr("normalized")),
         "input_height": layer.int_attr("input_height", 1),
         "input_width": layer.int_attr("input_width", 1),
         "objectness_score": layer.float_attr("objectness_score", 0.0)}
    if layer.attr("nms_threshold") is None:
        raise ModelError(f"{layer.where()}: missing attribute 'nms_threshold'")
    if version == 1:
        _check_classes(layer, x, a, layer.int_attr("num_classes", required=True))
    return b.op("DetectionOutput", x, a, dtype=out_dtype(layer, x), domain=DOMAIN)


def _check_classes(layer: Layer, x, a: dict, classes: int) -> None:
    """Version 1 names the class count; the ONNX form (version 8's) derives it from the
    shapes, so a count they contradict is refused."""
    conf, priors = shape_of(x[1]), shape_of(x[2])
    size = 4 if a["normalized"] else 5
    if conf is None or priors is None or len(conf) != 2 or len(priors) != 3:
        return
    n, p = conf[1], priors[2]
    if isinstance(n, int) and isinstance(p, int) and p >= size and n != classes * (p // size):
        raise UnsupportedError(f"{layer.where()}: num_classes={classes} but the scores hold "
                               f"{n} values for {p // size} priors")


@importer("DetectionOutput", since=1)
def _detection_output1(b: Builder, layer: Layer, x):
    return _detection_output(b, layer, x, 1)


@importer("DetectionOutput", since=8)
def _detection_output8(b: Builder, layer: Layer, x):
    return _detection_output(b, layer, x, 8)


def _proposal(b: Builder, layer: Layer, x, version: int):
    if len(x) != 3:
        raise ModelError(f"{layer.where()}: Proposal takes 3 inputs, got {len(x)}")
    framework = (layer.attr("framework") or "").strip().lower()
    if framework not in ("", "caffe", "tensorflow"):
        raise UnsupportedError(f"{layer.where()}: framework '{framework}' (caffe or tensorflow)")
    a = {"base_size": layer.int_attr("base_size", required=True),
         "pre_nms_topn": layer.int_attr("pre_nms_topn", required=True),
         "post_nms_topn": layer.int_attr("post_nms_topn", required=True),
         "nms_thresh": layer.float_attr("nms_thresh", 0.0),
         "feat_stride": layer.int_attr("feat_stride", required=True),
         "min_size": layer.int_attr("min_size", required=True),
         "ratio": floats_attr(layer, "ratio"), "scale": floats_attr(layer, "scale"),
         "clip_before_nms": int(layer.bool_attr("clip_before_nms", True)),
         "clip_after_nms": int(layer.bool_attr("clip_after_nms")),
         "normalize": int(layer.bool_attr("normalize")),
         "box_size_scale": layer.float_attr("box_size_scale", 1.0),
         "box_coordinate_scale": layer.float_attr("box_coordinate_scale", 1.0),
         "framework": "tensorflow" if framework == "tensorflow" else ""}
    if not a["ratio"] or not a["scale"]:
        raise ModelError(f"{layer.where()}: Proposal needs ratios and scales")
    dt = out_dtype(layer, x)
    outs = b.op("Proposal", x, a, outputs=2, dtype=dt, domain=DOMAIN)
    return outs if version >= 4 else outs[0]


@importer("Proposal", since=1)
def _proposal1(b: Builder, layer: Layer, x):
    return _proposal(b, layer, x, 1)


@importer("Proposal", since=4)
def _proposal4(b: Builder, layer: Layer, x):
    return _proposal(b, layer, x, 4)
