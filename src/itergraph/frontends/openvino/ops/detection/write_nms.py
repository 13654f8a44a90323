"""``org.openvinotoolkit`` detection ops -> OpenVINO layers: ``MatrixNms`` is ``MatrixNms-8``,
``MulticlassNms`` ``MulticlassNms-9`` (which takes both input forms), ``NMSRotated``
``NMSRotated-13``, ``GenerateProposals`` ``GenerateProposals-9`` (anchors given as ``[A, 4]``
broadcast to every location of the scores' ``[H, W]``)."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter

I64 = DataType.INT64

_COMMON = ("sort_result_type", "sort_result_across_batch", "output_type", "score_threshold",
           "nms_top_k", "keep_top_k", "background_class", "normalized")
_BOOLS = {"sort_result_across_batch", "normalized", "sort_result_descending", "clockwise"}
_FLOATS = {"score_threshold", "gaussian_sigma", "post_threshold", "iou_threshold", "nms_eta"}


def _data(node: Node, keys) -> dict:
    out = {}
    for k in keys:
        v = node.attrs[k]
        v = v.decode() if isinstance(v, bytes) else v
        out[k] = bool(v) if k in _BOOLS else float(v) if k in _FLOATS else v
    return out


def _idx(node: Node) -> DataType:
    t = node.attrs.get("output_type", "i64")
    return DataType.INT32 if (t.decode() if isinstance(t, bytes) else t) == "i32" else I64


@exporter("MatrixNms", since=1, domain=DOMAIN)
def _matrix_nms(w: NetWriter, node: Node, ins):
    data = _data(node, _COMMON + ("decay_function", "gaussian_sigma", "post_threshold"))
    idx = _idx(node)
    return w.layer("MatrixNms", "opset8", ins[:2], data,
                   [(ins[0].dtype, (None, 6)), (idx, (None, 1)), (idx, (None,))])


@exporter("MulticlassNms", since=1, domain=DOMAIN)
def _multiclass_nms(w: NetWriter, node: Node, ins):
    data = _data(node, _COMMON + ("iou_threshold", "nms_eta"))
    idx = _idx(node)
    ports = [p for p in ins[:3] if p is not None]
    return w.layer("MulticlassNms", "opset9", ports, data,
                   [(ins[0].dtype, (None, 6)), (idx, (None, 1)), (idx, (None,))])


@exporter("NMSRotated", since=1, domain=DOMAIN)
def _nms_rotated(w: NetWriter, node: Node, ins):
    data = _data(node, ("sort_result_descending", "output_type", "clockwise"))
    idx = _idx(node)
    return w.layer("NMSRotated", "opset13", ins[:5], data,
                   [(idx, (None, 3)), (ins[1].dtype, (None, 3)), (idx, (1,))])


@exporter("GenerateProposals", since=1, domain=DOMAIN)
def _generate_proposals(w: NetWriter, node: Node, ins):
    scores, deltas, im_info, anchors = ins[:4]
    if anchors.shape is None or len(anchors.shape) != 4:
        shape = w.one("ShapeOf", "opset3", [scores], {"output_type": "i64"}, dtype=I64,
                      shape=(4,))
        hw = w.one("Gather", "opset8", [shape, w.i64([2, 3]), w.i64(0)], {"batch_dims": 0},
                   dtype=I64, shape=(2,))
        tail = w.one("ShapeOf", "opset3", [anchors], {"output_type": "i64"}, dtype=I64,
                     shape=(2,))
        full = w.one("Concat", "opset1", [hw, tail], {"axis": 0}, dtype=I64, shape=(4,))
        anchors = w.one("Broadcast", "opset3", [anchors, full], {"mode": "numpy"},
                        dtype=anchors.dtype, shape=None)
    a = node.attrs
    data = {"min_size": float(a.get("min_size", 1.0)),
            "nms_threshold": float(a.get("nms_thresh", 0.7)),
            "post_nms_count": int(a.get("post_nms_topN", 300)),
            "pre_nms_count": int(a.get("pre_nms_topN", 6000)),
            "normalized": not int(a.get("legacy_plus_one", 1)), "nms_eta": 1.0,
            "roi_num_type": "i64"}
    dt = scores.dtype
    return w.layer("GenerateProposals", "opset9", [im_info, anchors, deltas, scores], data,
                   [(dt, (None, 4)), (dt, (None,)), (I64, (None,))])
