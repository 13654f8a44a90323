"""Translators of OpenVINO's detection ops with no ONNX counterpart into ops of the
``org.openvinotoolkit`` domain (semantics in `backends.common.nms_multi`, `nms_rotated` and
`generate_proposals`): ``MatrixNms-8``, ``MulticlassNms-8/9`` and ``NMSRotated-13`` keep their
inputs and attributes; ``GenerateProposals-9`` becomes the ``GenerateProposals`` op OpenVINO's
ONNX frontend reads (inputs reordered to scores, deltas, im_info, anchors; ``nms_threshold``,
``pre_nms_count``, ``post_nms_count``, ``normalized`` renamed ``nms_thresh``, ``pre_nms_topN``,
``post_nms_topN``, ``legacy_plus_one``). Constant anchors equal at every location are passed as
``[A, 4]``, the frontend's form; other anchors stay ``[H, W, A, 4]``.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

_SORT = {"none": "none", "score": "score", "class": "classid", "classid": "classid"}


def _choice(layer: Layer, key: str, default: str, allowed) -> str:
    v = (layer.attr(key, default) or default).strip().lower()
    if v not in allowed:
        raise ModelError(f"{layer.where()}: {key} '{v}' is not one of {', '.join(allowed)}")
    return v


def _idx(layer: Layer) -> tuple[str, DataType]:
    t = _choice(layer, "output_type", "i64", ("i64", "i32"))
    return t, DataType.INT32 if t == "i32" else DataType.INT64


def _common(layer: Layer) -> dict:
    sort = _SORT[_choice(layer, "sort_result_type", "none", tuple(_SORT))]
    return {"sort_result_type": sort,
            "sort_result_across_batch": int(layer.bool_attr("sort_result_across_batch")),
            "output_type": _idx(layer)[0],
            "score_threshold": layer.float_attr("score_threshold", 0.0),
            "nms_top_k": layer.int_attr("nms_top_k", -1),
            "keep_top_k": layer.int_attr("keep_top_k", -1),
            "background_class": layer.int_attr("background_class", -1),
            "normalized": int(layer.bool_attr("normalized", True))}


def _typed(b: Builder, name: str, layer: Layer, x, attrs: dict, types):
    """The op `name` of the domain, its outputs typed `types`."""
    outs = b.op(name, x, attrs, outputs=len(types), domain=DOMAIN)
    for v, t in zip(outs, types):
        v.type = TensorType(t, None)
    return outs


@importer("MatrixNms", since=8)
def _matrix_nms(b: Builder, layer: Layer, x):
    if len(x) != 2:
        raise ModelError(f"{layer.where()}: MatrixNms takes 2 inputs, got {len(x)}")
    attrs = _common(layer)
    attrs.update(decay_function=_choice(layer, "decay_function", "linear",
                                        ("linear", "gaussian")),
                 gaussian_sigma=layer.float_attr("gaussian_sigma", 2.0),
                 post_threshold=layer.float_attr("post_threshold", 0.0))
    idx = _idx(layer)[1]
    return _typed(b, "MatrixNms", layer, x, attrs, [out_dtype(layer, x), idx, idx])


@importer("MulticlassNms", since=8)
def _multiclass_nms(b: Builder, layer: Layer, x):
    most = 3 if (layer.opset or 8) >= 9 else 2
    if not 2 <= len(x) <= most:
        raise ModelError(f"{layer.where()}: MulticlassNms takes 2 to {most} inputs, got "
                         f"{len(x)}")
    attrs = _common(layer)
    attrs.update(iou_threshold=layer.float_attr("iou_threshold", 0.0),
                 nms_eta=layer.float_attr("nms_eta", 1.0))
    idx = _idx(layer)[1]
    return _typed(b, "MulticlassNms", layer, x, attrs, [out_dtype(layer, x), idx, idx])


@importer("NMSRotated", since=13)
def _nms_rotated(b: Builder, layer: Layer, x):
    if len(x) != 5:
        raise ModelError(f"{layer.where()}: NMSRotated takes 5 inputs, got {len(x)}")
    t, idx = _idx(layer)
    attrs = {"sort_result_descending": int(layer.bool_attr("sort_result_descending", True)),
             "output_type": t, "clockwise": int(layer.bool_attr("clockwise", True))}
    return _typed(b, "NMSRotated", layer, x, attrs,
                  [idx, out_dtype(layer, x, 1) or dtype_of(x[1]), idx])


def _anchors(b: Builder, anchors):
    """`anchors` [H, W, A, 4] as [A, 4] when constant and the same at every location."""
    c = b.value_of(anchors)
    if c is None or c.ndim != 4 or c.size == 0:
        return anchors
    flat = c.reshape(-1, c.shape[2], 4)
    return b.const(flat[0]) if np.array_equal(flat, np.broadcast_to(flat[:1], flat.shape)) \
        else anchors


@importer("GenerateProposals", since=9)
def _generate_proposals(b: Builder, layer: Layer, x):
    if len(x) != 4:
        raise ModelError(f"{layer.where()}: GenerateProposals takes 4 inputs, got {len(x)}")
    eta = layer.float_attr("nms_eta", 1.0)
    if eta != 1.0:
        raise UnsupportedError(f"{layer.where()}: GenerateProposals nms_eta={eta} (adaptive NMS) "
                               "is not supported")
    num_t = _choice(layer, "roi_num_type", "i64", ("i64", "i32"))
    im_info, anchors, deltas, scores = x
    attrs = {"min_size": layer.float_attr("min_size", 1.0),
             "nms_thresh": layer.float_attr("nms_threshold", 0.7),
             "pre_nms_topN": layer.int_attr("pre_nms_count", 6000),
             "post_nms_topN": layer.int_attr("post_nms_count", 300),
             "legacy_plus_one": int(not layer.bool_attr("normalized", True))}
    dt = out_dtype(layer, x) or dtype_of(scores)
    rois, roi_scores, num = _typed(b, "GenerateProposals", layer,
                                   [scores, deltas, im_info, _anchors(b, anchors)], attrs,
                                   [dt, dt, DataType.INT64])
    if num_t == "i32":
        num = b.cast(num, DataType.INT32)
    return [rois, roi_scores, num]
