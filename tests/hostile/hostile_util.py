"""Builders and peers for the hostile cases: small ONNX models, OpenVINO IR text, and checks that
ONNX Runtime / OpenVINO refuse what a case claims they refuse."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h

import itergraph as ig

F, D, I64, I32, B = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
                     TensorProto.BOOL)


def vi(name: str, elem=F, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def const(name: str, value, dtype=None) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def model(nodes, inputs, outputs, inits=(), opset: int = 17, ir: int | None = None,
          name: str = "g", functions=()) -> onnx.ModelProto:
    g = h.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    ir = ir if ir is not None else (7 if opset < 13 else 8 if opset < 15 else 9)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir,
                        functions=list(functions))


def graph(nodes, inputs, outputs, inits=(), name: str = "body") -> onnx.GraphProto:
    return h.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))


def counter_body(step_type=F, out_type=None, extra_nodes=(), scan=True) -> onnx.GraphProto:
    """Body ``(i, c, x) -> (c, x + 1, [x])``: a counted loop adding one to x per iteration."""
    nodes = [h.make_node("Identity", ["c"], ["c_out"]),
             h.make_node("Add", ["x", "one"], ["x_out"], name="add_one"),
             *extra_nodes]
    outs = [vi("c_out", B, []), vi("x_out", out_type or step_type, None)]
    if scan:
        nodes.append(h.make_node("Identity", ["x"], ["x_scan"]))
        outs.append(vi("x_scan", step_type, None))
    one = const("one", np.ones((), dtype=onnx.helper.tensor_dtype_to_np_dtype(step_type)))
    return graph(nodes, [vi("i", I64, []), vi("c", B, []), vi("x", step_type, None)], outs,
                 [one])


def loop_model(body=None, m_type=I64, cond_type=B, x_type=F, inputs=("M", "cond", "x0"),
               outputs=("x_final", "xs"), opset=17, name="L", x_shape=None) -> onnx.ModelProto:
    body = body if body is not None else counter_body(x_type)
    node = h.make_node("Loop", list(inputs), list(outputs), name=name, body=body)
    ins = [vi("M", m_type, []), vi("cond", cond_type, []), vi("x0", x_type, x_shape)]
    return model([node], ins, [vi(o, x_type, None) for o in outputs], opset=opset)


def ig_run(c, m, feeds, **kw):
    kw.setdefault("backend", c.backend)
    return ig.load(m).run(feeds, **kw)


def ort_session(m: onnx.ModelProto):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def run_ort(m: onnx.ModelProto, feeds: dict) -> dict:
    s = ort_session(m)
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def ort_refuses(m: onnx.ModelProto, feeds: dict) -> str:
    """Assert that ONNX Runtime refuses `m` (at load or run); returns its message."""
    try:
        run_ort(m, feeds)
    except Exception as e:  # noqa: BLE001 - any ORT failure is a refusal
        return str(e)
    raise AssertionError("premise: ONNX Runtime accepts this model")


def ov_core():
    import openvino as ov

    return ov.Core()


def ov_refuses(xml: str | bytes, weights: bytes | None, feeds: list | None = None) -> str:
    """Assert that OpenVINO refuses the IR (reading, compiling or running it)."""
    import openvino as ov

    core = ov_core()
    data = xml if isinstance(xml, str) else xml.decode("utf-8", "replace")
    try:
        w = ov.Tensor(np.frombuffer(weights, np.uint8).copy()) if weights else ov.Tensor(
            np.zeros(0, np.uint8))
        m = core.read_model(data, w)
        cm = core.compile_model(m, "CPU")
        if feeds is not None:
            cm(feeds)
    except Exception as e:  # noqa: BLE001
        return str(e)
    raise AssertionError("premise: OpenVINO accepts this model")


def ov_run(xml: str, weights: bytes | None, feeds: list):
    import openvino as ov

    core = ov_core()
    w = ov.Tensor(np.frombuffer(weights, np.uint8).copy()) if weights else ov.Tensor(
        np.zeros(0, np.uint8))
    cm = core.compile_model(core.read_model(xml, w), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return [np.asarray(v) for v in cm(feeds).values()]


def assert_close(got, want, rtol=1e-5, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- OpenVINO IR text --------------------------------------------------------------------------

def port(pid: int, dims, precision="FP32", names: str | None = None) -> str:
    n = f' names="{names}"' if names else ""
    body = "".join(f"<dim>{d}</dim>" for d in dims)
    return f'<port id="{pid}" precision="{precision}"{n}>{body}</port>'


def layer(lid: int, name: str, type_: str, version="opset1", data: dict | None = None,
          inputs=(), outputs=(), extra: str = "") -> str:
    d = ""
    if data is not None:
        d = "<data " + " ".join(f'{k}="{v}"' for k, v in data.items()) + "/>"
    ins = f"<input>{''.join(inputs)}</input>" if inputs else ""
    outs = f"<output>{''.join(outputs)}</output>" if outputs else ""
    v = f' version="{version}"' if version is not None else ""
    return f'<layer id="{lid}" name="{name}" type="{type_}"{v}>{d}{ins}{outs}{extra}</layer>'


def net(layers, edges, version=11, name="m", head='<?xml version="1.0"?>\n') -> str:
    es = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                 for a, b, c, d in edges)
    return (f'{head}<net name="{name}" version="{version}"><layers>{"".join(layers)}</layers>'
            f"<edges>{es}</edges></net>")


def add_net(dims=(2, 3), version="opset1", data=None, precision="FP32", op="Add") -> str:
    """``Parameter x, Parameter y -> op -> Result``."""
    return net([
        layer(0, "x", "Parameter", data={"shape": ",".join(map(str, dims)),
                                         "element_type": "f32"},
              outputs=[port(0, dims, precision)]),
        layer(1, "y", "Parameter", data={"shape": ",".join(map(str, dims)),
                                         "element_type": "f32"},
              outputs=[port(0, dims, precision)]),
        layer(2, "sum", op, version=version, data=data,
              inputs=[port(0, dims, precision), port(1, dims, precision)],
              outputs=[port(2, dims, precision)]),
        layer(3, "out", "Result", inputs=[port(0, dims, precision)]),
    ], [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def const_net(shape: str, size: int, element_type="f32", offset=0, dims=None) -> str:
    """``Const -> Result`` with the given shape attribute, size and offset."""
    dims = dims if dims is not None else [d for d in shape.split(",") if d]
    return net([
        layer(0, "w", "Const", data={"element_type": element_type, "shape": shape,
                                     "offset": offset, "size": size},
              outputs=[port(0, dims)]),
        layer(1, "out", "Result", inputs=[port(0, dims)]),
    ], [(0, 0, 1, 0)])


def ig_read_ov(c, xml, weights=None):
    from itergraph.frontends.openvino import read

    return read(xml, weights)


def save_ov(c, xml: str, weights: bytes = b"", name: str = "m"):
    p = c.path(f"{name}.xml")
    p.write_text(xml) if isinstance(xml, str) else p.write_bytes(xml)
    p.with_suffix(".bin").write_bytes(weights)
    return p


_OV_CACHE: dict[str, tuple[str, bytes]] = {}


def ov_ti(c) -> tuple[str, bytes]:
    """A TensorIterator (X [2,6,3] sliced on axis 1, H [2,3] carried: h + x_t) as (xml, bin);
    layer 2 'TI' holds body layers 0 'xi', 1 'hi', 2 'shape', 3 'flat', 4 'acc', 5 'h_out'."""
    if "ti" not in _OV_CACHE:
        import openvino as ov
        from openvino import opset13 as ops

        X = ops.parameter([2, 6, 3], np.float32, name="X")
        H = ops.parameter([2, 3], np.float32, name="H")
        xi = ops.parameter([2, 1, 3], np.float32, name="xi")
        hi = ops.parameter([2, 3], np.float32, name="hi")
        shape = ops.constant(np.array([2, 3], np.int64), name="shape")
        r = ops.reshape(xi, shape, False, name="flat")
        acc = ops.add(r, hi, name="acc")
        rh = ops.result(acc, name="h_out")
        ti = ops.tensor_iterator()
        ti.set_friendly_name("TI")
        ti.set_body(ov.Model([rh], [xi, hi], "body"))
        ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
        ti.set_merged_input(hi, H.output(0), rh.output(0))
        m = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H], "m")
        _OV_CACHE["ti"] = _saved(c, m, "ti")
    return _OV_CACHE["ti"]


def ov_loop5(c) -> tuple[str, bytes]:
    """A Loop-5 (trip count M, x [2] carried: x + 1, condition always true) as (xml, bin):
    layer 3 'L'; body layers 0 'it', 1 'xb', 2 'one', 3 'inc', 4 'go', 5 'go_out', 6 'x_out'."""
    if "loop5" not in _OV_CACHE:
        import openvino as ov
        from openvino import opset13 as ops

        M = ops.parameter([], np.int64, name="M")
        C = ops.constant(np.array(True), name="C")
        x0 = ops.parameter([2], np.float32, name="x0")
        it = ops.parameter([], np.int64, name="it")
        xb = ops.parameter([2], np.float32, name="xb")
        y = ops.add(xb, ops.constant(np.ones(2, np.float32), name="one"), name="inc")
        go = ops.constant(np.array(True), name="go")
        rc, ry = ops.result(go, name="go_out"), ops.result(y, name="x_out")
        loop = ops.loop(M, C)
        loop.set_friendly_name("L")
        loop.set_function(ov.Model([rc, ry], [it, xb], "lbody"))
        loop.set_special_body_ports([0, 0])
        loop.set_merged_input(xb, x0.output(0), ry.output(0))
        m = ov.Model([loop.get_iter_value(ry.output(0), -1)], [M, x0], "m")
        _OV_CACHE["loop5"] = _saved(c, m, "loop5")
    return _OV_CACHE["loop5"]


def _saved(c, m, name: str) -> tuple[str, bytes]:
    import openvino as ov

    path = c.path(f"{name}.xml")
    ov.save_model(m, str(path), compress_to_fp16=False)
    return path.read_text(), path.with_suffix(".bin").read_bytes()
