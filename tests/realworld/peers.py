"""ONNX Runtime and OpenVINO run the files itergraph writes, in a child process.

A peer that crashes on a file (a segfault, an abort) ends the child, not the test run: the
stage fails with "crashed" and the next request starts a fresh child. One child serves many
requests, so the import of OpenVINO and ONNX Runtime is paid once per test worker.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import numpy as np

TIMEOUT_S = 120
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


class PeerError(Exception):
    """The peer refused the file, failed while running it, or crashed."""


def _run(kind: str, path: str, feeds: dict) -> list[np.ndarray]:
    if kind == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        return [np.asarray(v) for v in sess.run(None, feeds)]
    import openvino as ov

    compiled = ov.Core().compile_model(path, "CPU", OV_CONFIG)
    result = compiled(feeds)
    return [np.asarray(result[o]) for o in compiled.outputs]


def _serve(conn) -> None:
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", _run(*request)))
        except Exception as e:  # the peer's own error, reported to the test
            conn.send(("error", f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"
                       if str(e).strip() else type(e).__name__))


class Peers:
    """The child process; `run` restarts it after a crash."""

    def __init__(self):
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self._proc.start()
        child.close()

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        self._proc = self._conn = None

    def run(self, kind: str, path: Path, feeds: dict) -> list[np.ndarray]:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        try:
            self._conn.send((kind, str(path), feeds))
            if not self._conn.poll(TIMEOUT_S):
                self._stop()
                raise PeerError(f"{kind} did not answer within {TIMEOUT_S} s")
            status, value = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            code = self._proc.exitcode if self._proc is not None else None
            self._stop()
            raise PeerError(f"{kind} crashed on {path.name} (exit code {code})") from None
        if status == "error":
            raise PeerError(f"{kind} failed on {path.name}: {value}")
        return value


PEERS = Peers()
