"""``org.openvinotoolkit`` SSD post-processing ops -> OpenVINO layers: ``PriorBox`` is
``PriorBox-8`` and ``PriorBoxClustered`` ``PriorBoxClustered-1``, fed dims 2 and 3 of their
two inputs (``ShapeOf`` and ``StridedSlice``) and unsqueezed to the ONNX form's
``[1, 2, N]``; ``DetectionOutput`` is ``DetectionOutput-8`` (defaults those of OpenVINO's ONNX
frontend: ``keep_top_k`` 1, ``normalized`` true); ``Proposal`` is ``Proposal-4``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter

I64, F32 = DataType.INT64, DataType.FLOAT32


def _hw(w: NetWriter, x):
    shape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64, shape=(4,))
    return w.one("StridedSlice", "opset1", [shape, w.i64([2]), w.i64([4]), w.i64([1])],
                 {"begin_mask": "0", "end_mask": "0"}, dtype=I64, shape=(2,))


def _floats(node: Node, key: str, default=()) -> str:
    return ",".join(repr(float(v)) for v in node.attrs.get(key, default))


def _flag(node: Node, key: str, default: int) -> str:
    return "true" if int(node.attrs.get(key, default)) else "false"


def _priors(w: NetWriter, node: Node, ins, type_: str, version: str, data: dict):
    y = w.one(type_, version, [_hw(w, ins[0]), _hw(w, ins[1])], data, dtype=F32)
    return w.one("Unsqueeze", "opset1", [y, w.i64([0])], dtype=F32)


@exporter("PriorBox", since=1, domain=OPENVINO_DOMAIN)
def _prior_box(w: NetWriter, node: Node, ins):
    a = node.attrs
    data = {"min_size": _floats(node, "min_size"), "max_size": _floats(node, "max_size"),
            "aspect_ratio": _floats(node, "aspect_ratio"), "flip": _flag(node, "flip", 0),
            "clip": _flag(node, "clip", 0), "step": repr(float(a.get("step", 0.0))),
            "offset": repr(float(a.get("offset", 0.0))),
            "variance": _floats(node, "variance"),
            "scale_all_sizes": _flag(node, "scale_all_sizes", 1),
            "fixed_ratio": _floats(node, "fixed_ratio"),
            "fixed_size": _floats(node, "fixed_size"), "density": _floats(node, "density"),
            "min_max_aspect_ratios_order": _flag(node, "min_max_aspect_ratios_order", 1)}
    return _priors(w, node, ins, "PriorBox", "opset8", data)


@exporter("PriorBoxClustered", since=1, domain=OPENVINO_DOMAIN)
def _prior_box_clustered(w: NetWriter, node: Node, ins):
    a = node.attrs
    data = {"width": _floats(node, "width"), "height": _floats(node, "height"),
            "clip": _flag(node, "clip", 0), "step_w": repr(float(a.get("step_w", 0.0))),
            "step_h": repr(float(a.get("step_h", 0.0))),
            "step": repr(float(a.get("step", 0.0))), "offset": repr(float(a.get("offset", 0.0))),
            "variance": _floats(node, "variance", (0.1,))}
    return _priors(w, node, ins, "PriorBoxClustered", "opset1", data)


@exporter("DetectionOutput", since=1, domain=OPENVINO_DOMAIN)
def _detection_output(w: NetWriter, node: Node, ins):
    a = node.attrs
    code = a.get("code_type", "caffe.PriorBoxParameter.CORNER")
    code = code.decode() if isinstance(code, bytes) else str(code)
    if not code.startswith("caffe.PriorBoxParameter."):
        code = "caffe.PriorBoxParameter." + code
    data = {"background_label_id": int(a.get("background_label_id", 0)),
            "top_k": int(a.get("top_k", -1)),
            "variance_encoded_in_target": _flag(node, "variance_encoded_in_target", 0),
            "keep_top_k": str(int(a.get("keep_top_k", 1))), "code_type": code,
            "share_location": _flag(node, "share_location", 1),
            "nms_threshold": repr(float(a["nms_threshold"])),
            "confidence_threshold": repr(float(a.get("confidence_threshold", 0.0))),
            "clip_after_nms": _flag(node, "clip_after_nms", 0),
            "clip_before_nms": _flag(node, "clip_before_nms", 0),
            "decrease_label_id": _flag(node, "decrease_label_id", 0),
            "normalized": _flag(node, "normalized", 1),
            "input_height": int(a.get("input_height", 1)),
            "input_width": int(a.get("input_width", 1)),
            "objectness_score": repr(float(a.get("objectness_score", 0.0)))}
    present = [i for i in ins if i is not None]
    return w.one("DetectionOutput", "opset8", present, data, dtype=ins[0].dtype)


@exporter("Proposal", since=1, domain=OPENVINO_DOMAIN)
def _proposal(w: NetWriter, node: Node, ins):
    a = node.attrs
    fw = a.get("framework", "")
    data = {k: int(a[k]) for k in ("base_size", "pre_nms_topn", "post_nms_topn", "feat_stride",
                                   "min_size")}
    data.update({"nms_thresh": repr(float(a.get("nms_thresh", 0.0))),
                 "ratio": _floats(node, "ratio"), "scale": _floats(node, "scale"),
                 "clip_before_nms": _flag(node, "clip_before_nms", 1),
                 "clip_after_nms": _flag(node, "clip_after_nms", 0),
                 "normalize": _flag(node, "normalize", 0),
                 "box_size_scale": repr(float(a.get("box_size_scale", 1.0))),
                 "box_coordinate_scale": repr(float(a.get("box_coordinate_scale", 1.0))),
                 "framework": fw.decode() if isinstance(fw, bytes) else str(fw)})
    dt = ins[0].dtype
    return w.layer("Proposal", "opset4", ins[:3], data, [(dt, None), (dt, None)])
