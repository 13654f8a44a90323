"""The transforms between loop flavours: loop-to-scan, scan-to-loop, loop-to-ti."""

from __future__ import annotations

from ..passes.loop_to_scan import LoopToScan
from ..passes.loop_to_ti import LoopToTI
from ..passes.scan_to_loop import scan_to_loop
from .registry import Transform

LOOP_FORMS: tuple[Transform, ...] = (
    Transform("loop-to-scan", "counted loops become what the ONNX writer writes as Scan",
              lambda _arg: LoopToScan()),
    Transform.of("scan-to-loop", "Scans/TensorIterators read rows by the iteration number: "
                 "written as ONNX Loop", scan_to_loop),
    Transform("loop-to-ti", "counted loops become what the OpenVINO writer writes as "
              "TensorIterator (Model Optimizer's LoopToTI)", lambda _arg: LoopToTI()),
)
