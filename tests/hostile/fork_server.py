"""The process the hostile cases' children are forked from.

One server per parent process imports itergraph, ONNX and the case modules once; each child
is forked from it and starts in about a millisecond instead of importing them again (half a
second each, for some fifty children a run). The server holds no thread when it forks:
OpenBLAS runs on one (``OMP_NUM_THREADS=1`` in its environment), and JAX, whose runtime starts
threads, is imported only by the children whose cases need it.

The parent talks to the server over a Unix socket of whole messages (``SOCK_SEQPACKET``):

- ``{"run": [tmp, "module:case", ...]}``, with the write end of a pipe attached: the server
  forks a child that reports on that pipe as `harness.child_main` does (its stderr goes to
  ``tmp/stderr.txt``), and answers ``{"pid": pid}``;
- ``{"wait": pid}`` / ``{"poll": pid}``: reap the child (``poll`` without blocking) and answer
  ``{"status": code}`` (negative: the signal that ended it; None: still running).

The parent kills a child that hangs with a signal of its own (it is the same user). The
server exits when the parent closes its end of the socket.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: what cases import lazily, imported before forking (none of it starts a thread)
PRELOAD = ("itergraph.backends.numpy", "itergraph.frontends.onnx",
           "itergraph.frontends.openvino", "onnx.reference", "onnx.shape_inference")


# -- the server side ---------------------------------------------------------------------------

def serve(fd: int) -> int:
    import harness

    harness.load_cases(harness.CASE_MODULES)
    for name in PRELOAD:
        importlib.import_module(name)
    sock = socket.socket(fileno=fd)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 1)
        except OSError:
            return 0
        if not msg:  # the parent closed the socket
            return 0
        req = json.loads(msg)
        if "run" in req:
            pid = os.fork()
            if pid == 0:
                _child(sock, fds[0], req["run"])
            os.close(fds[0])
            reply = {"pid": pid}
        else:
            pid = req.get("wait") or req["poll"]
            done, status = os.waitpid(pid, 0 if "wait" in req else os.WNOHANG)
            reply = {"status": os.waitstatus_to_exitcode(status) if done else None}
        sock.send(json.dumps(reply).encode())


def _child(sock: socket.socket, out_fd: int, argv: list[str]) -> None:
    """The forked child: report on `out_fd`, write stderr to ``tmp/stderr.txt``; never returns."""
    code = 1
    try:
        sock.close()
        tmp = argv[0]
        os.chdir(tmp)
        err = os.open(os.path.join(tmp, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(err, 2)
        os.dup2(out_fd, 1)
        os.close(err)
        os.close(out_fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        import harness

        code = harness.child_main(argv)
    except BaseException:  # noqa: BLE001 - the parent reads it from stderr.txt
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - a closed pipe: nothing more to say
                pass
        os._exit(code)


# -- the parent side ---------------------------------------------------------------------------

class ForkedChild:
    """What `harness.run_group` uses of a `subprocess.Popen`, for a child of the server."""

    def __init__(self, server: Server, pid: int, stdout):
        self.server = server
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None

    def _reap(self, how: str) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.request({how: self.pid})["status"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self._reap("wait")

    def poll(self) -> int | None:
        return self._reap("poll")

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Server:
    def __init__(self, env: dict):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "fork_server.py"), str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env, cwd=str(HERE))
        theirs.close()
        self.sock = ours

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, msg: dict, fds: tuple[int, ...] = ()) -> dict:
        socket.send_fds(self.sock, [json.dumps(msg).encode()], list(fds))
        reply = self.sock.recv(1 << 16)
        if not reply:
            raise ConnectionError("the hostile cases' fork server exited")
        return json.loads(reply)

    def spawn(self, argv: list[str]) -> ForkedChild:
        r, w = os.pipe()
        try:
            pid = self.request({"run": argv}, (w,))["pid"]
        finally:
            os.close(w)
        return ForkedChild(self, pid, os.fdopen(r, "rb", buffering=0))

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
