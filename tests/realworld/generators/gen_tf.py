"""TensorFlow/Keras loops for the real-world corpus: sources ``tf`` and ``tf-ov``.

``tf``: ONNX files written by tf2onnx, from ``tf.function`` loops (``tf.while_loop`` with
break-style conditions, several loop variables and growing state under ``shape_invariants``,
``tf.scan``/``foldl``/``foldr``/``map_fn``, ``TensorArray`` loops, ``tf.cond`` in a loop, nested
loops, greedy decoders with ``argmax`` and ``tf.math.top_k``, AutoGraph ``for``/``while`` with
``break``) converted with ``tf2onnx.convert.from_function``, and from Keras recurrent models
(LSTM/GRU/SimpleRNN with return_sequences, return_state, go_backwards, Bidirectional concat and
sum, Masking, stacked layers, initial-state inputs, ``keras.layers.RNN`` over cells) converted
with ``tf2onnx.convert.from_keras``. Each model is written at the oldest opset at which tf2onnx
writes a file with no TensorFlow op left that ONNX Runtime runs to TF's result (searched upward
from 7, the oldest ONNX Runtime supports), at opset 18 (the newest tf2onnx 1.17 offers) and,
for some, at 13 in between.

How tf2onnx handles TensorArray loops: ``from_function`` (like ``--saved-model`` on the command
line) turns a TensorList reserved before a while loop and written only inside it into Loop scan
outputs; a list also written before the loop (``tf.scan`` without initializer) keeps its
TensorList ops, and a list written at ``n - 1 - i`` (``tf.scan(reverse=True)``) comes out in
iteration order, i.e. reversed. Weights must be ``tf.Variable``s: a captured eager tensor
becomes a graph input without initializer. The generator lists such failures at the end.

``tf-ov``: OpenVINO IR from OpenVINO's TensorFlow frontend (``ov.convert_model`` on the same
models saved as SavedModels, and on two Keras model objects directly), written with
``ov.save_model(..., compress_to_fp16=False)``; plus, where it converts, OpenVINO's ONNX
frontend on the opset-18 tf2onnx file (``*_onnxfe``: the Keras LSTM/GRU files, which become
LSTMSequence/GRUSequence; it refuses the Loops tf2onnx writes).

Expected outputs are TensorFlow's own (the tf.function, the Keras model, or the SavedModel's
serving signature for the IR). Every file is also run by ONNX Runtime and OpenVINO (in a child
process, so a crash is a recorded error) and the result stored in the entry's ``peer``. A file
that computes something other than TF (ONNX Runtime differs and OpenVINO does not agree with TF
either; an IR known to be wrong, ``Case.ir_wrong``) is left out and reported as a failure.

Run from the repository root, in the TensorFlow 2.15 environment (tf.keras is Keras 2; tf2onnx
1.17 does not convert TF 2.16+ TensorList loops); about 20 minutes on two busy cores:

    python tests/realworld/generators/gen_tf.py [--only SUBSTRING]

``--only`` is for trying a case: the manifests then hold only the matching cases.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

# --------------------------------------------------------------------------------------------
# Generator proper (imports TensorFlow)
# --------------------------------------------------------------------------------------------
import logging  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import openvino as ov  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402
from peer_record import compare, message, run_peer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402

logging.getLogger("tf2onnx").setLevel(logging.CRITICAL)
tf.get_logger().setLevel(logging.ERROR)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.threading.set_intra_op_parallelism_threads(1)

L = tf.keras.layers
OLDEST_TRIED = 7      # ONNX Runtime guarantees opsets from 7 on
MIDDLE = 13
NEWEST = 18           # tf2onnx 1.17's newest opset


@dataclass
class Case:
    """One model: a ``tf.function`` (``fn`` + ``signature``) or a Keras model (``keras``)."""
    name: str
    tags: tuple[str, ...]
    description: str
    feeds: dict[str, np.ndarray]
    fn: object = None
    signature: list = field(default_factory=list)
    keras: object = None
    middle: bool = False          # also write the in-between opset
    ov_keras_object: bool = False  # also convert the Keras object itself (not the SavedModel)
    variables: tuple = ()          # the tf.Variables ``fn`` reads (tracked by the SavedModel)
    ir_wrong: str = ""             # why OpenVINO's TF frontend writes an IR that computes
    #                                something else (checked by hand): no tf-ov entry then
    rtol: float = 1e-4
    atol: float = 1e-5


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def spec(shape, dtype, name):
    return tf.TensorSpec(shape, dtype, name=name)


def weight(seed: int, *shape, scale: float = 0.5) -> tf.Variable:
    """A model weight: a tf.Variable, as in a tf.Module (tf2onnx freezes it to a constant;
    a captured eager tensor instead becomes a graph input without initializer)."""
    return tf.Variable(rng(seed).uniform(-scale, scale, shape).astype(np.float32))


# ----------------------------------------------------------------------------- tf.function loops

DYNAMIC_TA = ("OpenVINO's TF frontend turns TensorArray(size=0, dynamic_size=True) written in "
              "this data-dependent while loop into a constant [0, ...] buffer updated by "
              "ScatterUpdate, so the IR returns an empty token array (OpenVINO itself gives "
              "shape (B, 0) / (0, B))")


def loop_cases() -> list[Case]:
    cases = []
    f32, i32 = tf.float32, tf.int32

    def while_counted(x, n):
        def body(i, x):
            return i + 1, x * 0.5 + 1.0
        i, y = tf.while_loop(lambda i, x: i < n, body, [tf.constant(0), x])
        return y, i
    cases.append(Case(
        "while_counted", ("loop", "while"),
        "tf.while_loop for n steps: x = x * 0.5 + 1; returns x and the counter",
        {"x": rng(1).normal(size=(2, 3)).astype(np.float32), "n": np.array(5, np.int32)},
        while_counted, [spec([None, 3], f32, "x"), spec([], i32, "n")], middle=True))

    def while_break(x, limit):
        def cond(i, x):
            return tf.logical_and(i < 20, tf.reduce_sum(x) < limit)
        i, y = tf.while_loop(cond, lambda i, x: (i + 1, x * 1.5 + 0.25), [tf.constant(0), x])
        return y, i
    cases.append(Case(
        "while_break", ("loop", "while", "break"),
        "tf.while_loop stopping when sum(x) reaches a limit (break-style, data-dependent)",
        {"x": rng(2).uniform(0, 1, (4,)).astype(np.float32),
         "limit": np.array(30.0, np.float32)},
        while_break, [spec([4], f32, "x"), spec([], f32, "limit")]))

    def while_fib(a, b, n):
        def body(i, a, b, s):
            return i + 1, a + b, a, s + a * b
        _, a, b, s = tf.while_loop(lambda i, *_: i < n, body,
                                   [tf.constant(0), a, b, tf.zeros_like(a)])
        return a, b, s
    cases.append(Case(
        "while_swap_vars", ("loop", "while", "state"),
        "four loop variables, two of which swap (a, b = a + b, a) plus an accumulator",
        {"a": np.array([1.0, 0.5], np.float32), "b": np.array([0.0, 0.25], np.float32),
         "n": np.array(6, np.int32)},
        while_fib, [spec([2], f32, "a"), spec([2], f32, "b"), spec([], i32, "n")],
        middle=True))

    def while_growing(x, n):
        def body(i, acc):
            nxt = tf.tanh(acc[-1:] * 0.9 + 0.1)
            return i + 1, tf.concat([acc, nxt], axis=0)
        _, acc = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), x[None]],
                               shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3])])
        return acc
    cases.append(Case(
        "while_growing", ("loop", "while", "growing"),
        "state that grows by one row per step (shape_invariants [None, 3])",
        {"x": rng(3).normal(size=(3,)).astype(np.float32), "n": np.array(4, np.int32)},
        while_growing, [spec([3], f32, "x"), spec([], i32, "n")], middle=True))

    def while_tensorarray(x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

        def body(i, h, ta):
            h = tf.sin(h) + tf.cast(i, tf.float32) * 0.1
            return i + 1, h, ta.write(i, h * 2.0)
        _, h, ta = tf.while_loop(lambda i, *_: i < n, body, [tf.constant(0), x, ta])
        return ta.stack(), h
    cases.append(Case(
        "while_tensorarray_write", ("loop", "while", "tensorarray"),
        "TensorArray(dynamic_size) written each step of a while_loop, then stacked",
        {"x": rng(4).normal(size=(2, 3)).astype(np.float32), "n": np.array(5, np.int32)},
        while_tensorarray, [spec([2, 3], f32, "x"), spec([], i32, "n")]))

    def ta_read_write(xs):
        tin = tf.TensorArray(tf.float32, size=tf.shape(xs)[0]).unstack(xs)
        tout = tf.TensorArray(tf.float32, size=tf.shape(xs)[0])

        def body(i, acc, tout):
            acc = acc * tin.read(i) + 1.0
            return i + 1, acc, tout.write(i, acc)
        _, acc, tout = tf.while_loop(lambda i, *_: i < tf.shape(xs)[0], body,
                                     [tf.constant(0), tf.ones_like(xs[0]), tout])
        return tout.stack(), acc
    cases.append(Case(
        "tensorarray_unstack_read", ("loop", "while", "tensorarray", "scan"),
        "TensorArray.unstack + read(i) in the loop, write(i) of a running product, stack",
        {"xs": rng(5).uniform(0.5, 1.5, (6, 3)).astype(np.float32)},
        ta_read_write, [spec([None, 3], f32, "xs")]))

    def scan_init(xs):
        return tf.scan(lambda a, e: a * 0.8 + e, xs, initializer=tf.zeros([3]))
    cases.append(Case(
        "scan_init", ("loop", "scan"), "tf.scan with an initializer: a = 0.8 a + x_t",
        {"xs": rng(6).normal(size=(6, 3)).astype(np.float32)},
        scan_init, [spec([None, 3], f32, "xs")]))

    def scan_noinit(xs):
        return tf.scan(lambda a, e: a * 0.8 + e, xs)
    cases.append(Case(
        "scan_noinit", ("loop", "scan"),
        "tf.scan without initializer (first element seeds the state; written before the loop)",
        {"xs": rng(7).normal(size=(6, 3)).astype(np.float32)},
        scan_noinit, [spec([6, 3], f32, "xs")]))

    def scan_tuple(xs, h0):
        def step(state, x):
            h, c = state
            c = c * 0.5 + tf.tanh(x)
            h = tf.sigmoid(h + c)
            return h, c
        hs, cs = tf.scan(step, xs, initializer=(h0, tf.zeros_like(h0)))
        return hs, cs
    cases.append(Case(
        "scan_tuple_state", ("loop", "scan", "state"),
        "tf.scan with a two-tensor state (h, c), both stacked",
        {"xs": rng(8).normal(size=(5, 2, 4)).astype(np.float32),
         "h0": rng(9).normal(size=(2, 4)).astype(np.float32)},
        scan_tuple, [spec([None, 2, 4], f32, "xs"), spec([2, 4], f32, "h0")]))

    def scan_reverse(xs):
        return tf.scan(lambda a, e: a * 0.5 + e, xs, initializer=tf.zeros([2]), reverse=True)
    cases.append(Case(
        "scan_reverse", ("loop", "scan", "reverse"), "tf.scan(reverse=True) with initializer",
        {"xs": rng(10).normal(size=(7, 2)).astype(np.float32)},
        scan_reverse, [spec([None, 2], f32, "xs")]))

    w_in, w_h, b = weight(11, 4, 6), weight(12, 6, 6), weight(13, 6)

    def scan_rnn(xs):
        h0 = tf.zeros([tf.shape(xs)[1], 6])
        return tf.scan(lambda h, x: tf.tanh(x @ w_in + h @ w_h + b), xs, initializer=h0)
    cases.append(Case(
        "scan_rnn_cell", ("loop", "scan", "rnn"),
        "hand-written tanh RNN cell in tf.scan over time-major input [T, B, 4]",
        {"xs": rng(14).normal(size=(6, 3, 4)).astype(np.float32)},
        scan_rnn, [spec([None, None, 4], f32, "xs")], middle=True, variables=(w_in, w_h, b)))

    def foldl_init(xs):
        return tf.foldl(lambda a, e: a * 0.9 + tf.reduce_max(e) * e, xs, initializer=tf.ones([3]))
    cases.append(Case(
        "foldl_init", ("loop", "foldl"), "tf.foldl with initializer",
        {"xs": rng(15).normal(size=(5, 3)).astype(np.float32)},
        foldl_init, [spec([None, 3], f32, "xs")]))

    def foldl_noinit(xs):
        return tf.foldl(lambda a, e: tf.maximum(a, e) + 0.1 * e, xs)
    cases.append(Case(
        "foldl_noinit", ("loop", "foldl"), "tf.foldl without initializer (starts from xs[0])",
        {"xs": rng(16).normal(size=(6, 4)).astype(np.float32)},
        foldl_noinit, [spec([None, 4], f32, "xs")]))

    def foldr_init(xs):
        return tf.foldr(lambda a, e: a * 0.5 - e, xs, initializer=tf.zeros([3]))
    cases.append(Case(
        "foldr_init", ("loop", "foldr", "reverse"), "tf.foldr with initializer",
        {"xs": rng(17).normal(size=(5, 3)).astype(np.float32)},
        foldr_init, [spec([None, 3], f32, "xs")]))

    def map_rows(x):
        return tf.map_fn(lambda r: tf.nn.softmax(r) * tf.reduce_sum(r), x)
    cases.append(Case(
        "map_fn_rows", ("loop", "map_fn"), "tf.map_fn over rows (softmax times row sum)",
        {"x": rng(18).normal(size=(4, 5)).astype(np.float32)},
        map_rows, [spec([None, 5], f32, "x")]))

    def map_tuple(a, b):
        return tf.map_fn(lambda ab: (ab[0] * ab[1], tf.reduce_sum(ab[0] - ab[1])), (a, b),
                         fn_output_signature=(tf.float32, tf.float32))
    cases.append(Case(
        "map_fn_tuple", ("loop", "map_fn"),
        "tf.map_fn over two tensors with two outputs (fn_output_signature)",
        {"a": rng(19).normal(size=(3, 4)).astype(np.float32),
         "b": rng(20).normal(size=(3, 4)).astype(np.float32)},
        map_tuple, [spec([None, 4], f32, "a"), spec([None, 4], f32, "b")]))

    def cond_in_while(x, n):
        def body(i, x):
            x = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 0.5 - 1.0, lambda: x * 1.5 + 2.0)
            return i + 1, x
        _, y = tf.while_loop(lambda i, x: i < n, body, [tf.constant(0), x])
        return y
    cases.append(Case(
        "cond_in_while", ("loop", "while", "cond"), "tf.cond in the body of a while_loop",
        {"x": rng(21).normal(size=(3,)).astype(np.float32), "n": np.array(7, np.int32)},
        cond_in_while, [spec([3], f32, "x"), spec([], i32, "n")], middle=True))

    def cond_in_scan(xs):
        def step(a, e):
            return tf.cond(e[0] > 0.0, lambda: a + e, lambda: a * 0.5)
        return tf.scan(step, xs, initializer=tf.zeros([3]))
    cases.append(Case(
        "cond_in_scan", ("loop", "scan", "cond"), "tf.cond on the current element in tf.scan",
        {"xs": rng(22).normal(size=(6, 3)).astype(np.float32)},
        cond_in_scan, [spec([None, 3], f32, "xs")]))

    def nested_while(x, n, m):
        def outer(i, x):
            _, x = tf.while_loop(lambda j, y: j < m, lambda j, y: (j + 1, y * 0.9 + 0.1),
                                 [tf.constant(0), x])
            return i + 1, x + tf.cast(i, tf.float32)
        _, y = tf.while_loop(lambda i, x: i < n, outer, [tf.constant(0), x])
        return y
    cases.append(Case(
        "nested_while", ("loop", "while", "nested"), "while_loop inside a while_loop",
        {"x": rng(23).normal(size=(2, 2)).astype(np.float32), "n": np.array(3, np.int32),
         "m": np.array(4, np.int32)},
        nested_while, [spec([2, 2], f32, "x"), spec([], i32, "n"), spec([], i32, "m")],
        middle=True))

    def map_of_scan(x):
        return tf.map_fn(lambda row: tf.scan(lambda a, e: a * 0.7 + e, row,
                                             initializer=tf.constant(0.0)), x)
    cases.append(Case(
        "map_fn_of_scan", ("loop", "map_fn", "scan", "nested"),
        "tf.scan inside tf.map_fn (per-row running filter)",
        {"x": rng(24).normal(size=(3, 6)).astype(np.float32)},
        map_of_scan, [spec([None, 6], f32, "x")]))

    def autograph_for(x, n):
        ta = tf.TensorArray(tf.float32, size=n)
        h = x
        for i in tf.range(n):
            h = tf.tanh(h * 1.1 + tf.cast(i, tf.float32))
            ta = ta.write(i, h)
        return ta.stack(), h
    cases.append(Case(
        "autograph_for_range", ("loop", "while", "tensorarray"),
        "AutoGraph `for i in tf.range(n)` writing a TensorArray",
        {"x": rng(25).normal(size=(2, 3)).astype(np.float32), "n": np.array(5, np.int32)},
        autograph_for, [spec([2, 3], f32, "x"), spec([], i32, "n")]))

    def autograph_break(x):
        i = tf.constant(0)
        total = tf.zeros([])
        while i < 50:
            x = x * 1.3 + 0.1
            total += tf.reduce_sum(x)
            if total > 40.0:
                break
            i += 1
        return x, total, i
    cases.append(Case(
        "autograph_while_break", ("loop", "while", "break"),
        "AutoGraph Python `while` with `if ...: break` (break becomes a loop variable)",
        {"x": rng(26).uniform(0, 1, (3,)).astype(np.float32)},
        autograph_break, [spec([3], f32, "x")]))

    vocab, hid, eos, max_len = 7, 6, 6, 8  # with these weights both rows emit 6 early
    emb, w_out, w_hh = weight(30, vocab, hid, scale=1.0), weight(31, hid, vocab, scale=1.0), \
        weight(32, hid, hid, scale=1.0)

    def greedy_argmax(h0):
        batch = tf.shape(h0)[0]
        ta = tf.TensorArray(tf.int64, size=0, dynamic_size=True)

        def cond(i, h, done, ta):
            return tf.logical_and(i < max_len, tf.logical_not(tf.reduce_all(done)))

        def body(i, h, done, ta):
            tok = tf.argmax(h @ w_out, axis=-1)
            h = tf.tanh(tf.gather(emb, tok) + h @ w_hh)
            tok = tf.where(done, tf.constant(eos, tf.int64), tok)
            return i + 1, h, tf.logical_or(done, tok == eos), ta.write(i, tok)
        i, h, _, ta = tf.while_loop(cond, body, [tf.constant(0), h0,
                                                 tf.zeros([batch], tf.bool), ta])
        return tf.transpose(ta.stack()), h, i
    cases.append(Case(
        "greedy_decoder_argmax", ("loop", "while", "decoder", "break", "tensorarray"),
        "greedy decoder: argmax token, embedding lookup, stop when every row emitted EOS",
        {"h0": rng(33).normal(size=(2, hid)).astype(np.float32)},
        greedy_argmax, [spec([None, hid], f32, "h0")], middle=True,
        variables=(emb, w_out, w_hh), ir_wrong=DYNAMIC_TA))

    def greedy_fixed(h0):
        ta = tf.TensorArray(tf.int32, size=max_len)

        def body(i, h, done, ta):
            tok = tf.argmax(h @ w_out, axis=-1, output_type=tf.int32)
            tok = tf.where(done, eos, tok)
            h = tf.tanh(tf.gather(emb, tok) + h @ w_hh)
            return i + 1, h, tf.logical_or(done, tok == eos), ta.write(i, tok)
        i, h, _, ta = tf.while_loop(
            lambda i, h, done, ta: tf.logical_and(i < max_len, tf.reduce_any(~done)), body,
            [tf.constant(0), h0, tf.zeros([tf.shape(h0)[0]], tf.bool), ta])
        return ta.stack()[:i], h
    cases.append(Case(
        "greedy_decoder_fixed_ta", ("loop", "while", "decoder", "break", "tensorarray"),
        "greedy decoder writing a TensorArray(size=max_len), stacked and cut to the steps run",
        {"h0": rng(35).normal(size=(3, hid)).astype(np.float32)},
        greedy_fixed, [spec([None, hid], f32, "h0")], variables=(emb, w_out, w_hh)))

    def greedy_topk(h0):
        ta_tok = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        ta_score = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

        def cond(i, h, last, *_):
            return tf.logical_and(i < max_len, tf.reduce_any(last != eos))

        def body(i, h, last, ta_tok, ta_score):
            scores, idx = tf.math.top_k(tf.nn.log_softmax(h @ w_out), k=1)
            tok = idx[:, 0]
            h = tf.tanh(tf.gather(emb, tok) + h @ w_hh)
            return i + 1, h, tok, ta_tok.write(i, tok), ta_score.write(i, scores[:, 0])
        i, _, _, ta_tok, ta_score = tf.while_loop(
            cond, body, [tf.constant(0), h0, tf.zeros([tf.shape(h0)[0]], tf.int32), ta_tok,
                         ta_score])
        return ta_tok.stack(), ta_score.stack(), i
    cases.append(Case(
        "greedy_decoder_topk", ("loop", "while", "decoder", "break", "tensorarray"),
        "greedy decoder with tf.math.top_k(k=1) and log-softmax scores, EOS stop",
        {"h0": rng(34).normal(size=(2, hid)).astype(np.float32)},
        greedy_topk, [spec([None, hid], f32, "h0")], variables=(emb, w_out, w_hh),
        ir_wrong=DYNAMIC_TA))

    return cases


# ----------------------------------------------------------------------------- Keras RNNs

def keras_model(seed: int, inputs: dict[str, tuple], build) -> tf.keras.Model:
    tf.keras.utils.set_random_seed(seed)
    ins = {n: tf.keras.Input(shape, name=n) for n, shape in inputs.items()}
    outs = build(*ins.values())
    model = tf.keras.Model(list(ins.values()), outs)
    # recurrent biases start at zero (and the forget bias at one): randomise every weight so
    # a wrong gate order or bias shows
    r = rng(seed)
    model.set_weights([r.uniform(-0.6, 0.6, w.shape).astype(np.float32)
                       for w in model.get_weights()])
    return model


def seq(seed: int, batch=2, steps=6, feat=4, masked=False) -> np.ndarray:
    x = rng(seed).normal(size=(batch, steps, feat)).astype(np.float32)
    if masked:  # row 1 padded after 4 steps, row 0 has a padded step in the middle
        x[1, 4:] = 0.0
        if batch > 2:
            x[2, 2:] = 0.0
        x[0, 2] = 0.0
    return x


def keras_cases() -> list[Case]:
    cases = []
    T, F = 6, 4

    def kcase(name, tags, desc, seed, build, inputs=None, feeds=None, **kw):
        inputs = inputs or {"x": (T, F)}
        feeds = feeds or {"x": seq(seed)}
        return Case(name, tags, desc, feeds, keras=keras_model(seed, inputs, build), **kw)

    cases.append(kcase("keras_lstm_seq", ("lstm", "rnn"), "Keras LSTM(8, return_sequences)",
                       40, lambda x: L.LSTM(8, return_sequences=True)(x), middle=True,
                       ov_keras_object=True))
    cases.append(kcase("keras_lstm_state", ("lstm", "rnn", "state"),
                       "Keras LSTM(8, return_sequences, return_state): outputs seq, h, c",
                       41, lambda x: L.LSTM(8, return_sequences=True, return_state=True)(x)))
    cases.append(kcase("keras_gru_seq", ("gru", "rnn"),
                       "Keras GRU(8, return_sequences), reset_after=True (the default)",
                       42, lambda x: L.GRU(8, return_sequences=True)(x)))
    cases.append(kcase("keras_gru_v1_state", ("gru", "rnn", "state"),
                       "Keras GRU(8, reset_after=False, return_state): last output and state",
                       43, lambda x: L.GRU(8, reset_after=False, return_state=True)(x)))
    cases.append(kcase("keras_simplernn_seq", ("rnn",), "Keras SimpleRNN(8, return_sequences)",
                       44, lambda x: L.SimpleRNN(8, return_sequences=True)(x)))
    cases.append(kcase("keras_simplernn_state_backwards", ("rnn", "reverse", "state"),
                       "Keras SimpleRNN(8, return_state, go_backwards)",
                       45, lambda x: L.SimpleRNN(8, return_state=True, go_backwards=True)(x)))
    cases.append(kcase("keras_lstm_backwards", ("lstm", "rnn", "reverse"),
                       "Keras LSTM(8, return_sequences, go_backwards): sequence in reversed order",
                       46, lambda x: L.LSTM(8, return_sequences=True, go_backwards=True)(x)))
    cases.append(kcase("keras_gru_backwards", ("gru", "rnn", "reverse"),
                       "Keras GRU(8, go_backwards), last output only",
                       47, lambda x: L.GRU(8, go_backwards=True)(x)))
    cases.append(kcase("keras_bidi_lstm_concat", ("lstm", "rnn", "bidirectional"),
                       "Keras Bidirectional(LSTM(8, return_sequences)), merge_mode=concat",
                       48, lambda x: L.Bidirectional(L.LSTM(8, return_sequences=True))(x)))
    cases.append(kcase("keras_bidi_gru_sum", ("gru", "rnn", "bidirectional"),
                       "Keras Bidirectional(GRU(8, return_sequences), merge_mode=sum)",
                       49, lambda x: L.Bidirectional(L.GRU(8, return_sequences=True),
                                                     merge_mode="sum")(x)))
    cases.append(kcase("keras_bidi_simplernn_state", ("rnn", "bidirectional", "state"),
                       "Keras Bidirectional(SimpleRNN(8, return_state)), concat: out, h_fw, h_bw",
                       50, lambda x: L.Bidirectional(L.SimpleRNN(8, return_state=True))(x)))
    cases.append(kcase("keras_masking_lstm", ("lstm", "rnn", "masking"),
                       "Masking(0.0) before LSTM(8, return_sequences): padded steps keep state",
                       51, lambda x: L.LSTM(8, return_sequences=True)(L.Masking(0.0)(x)),
                       feeds={"x": seq(51, batch=3, masked=True)}, middle=True,
                       ov_keras_object=True))
    cases.append(kcase("keras_masking_gru", ("gru", "rnn", "masking"),
                       "Masking(0.0) before GRU(8): last output of masked sequences",
                       52, lambda x: L.GRU(8)(L.Masking(0.0)(x)),
                       feeds={"x": seq(52, batch=3, masked=True)}))
    cases.append(kcase("keras_masking_bidi_lstm", ("lstm", "rnn", "masking", "bidirectional"),
                       "Masking(0.0) before Bidirectional(LSTM(6, return_sequences))",
                       53, lambda x: L.Bidirectional(L.LSTM(6, return_sequences=True))(
                           L.Masking(0.0)(x)),
                       feeds={"x": seq(53, batch=3, masked=True)}))
    cases.append(kcase("keras_stacked_lstm_gru", ("lstm", "gru", "rnn", "stacked"),
                       "stacked LSTM(8, return_sequences) -> GRU(6) -> Dense(3)",
                       54, lambda x: L.Dense(3)(L.GRU(6)(L.LSTM(8, return_sequences=True)(x)))))
    cases.append(kcase("keras_stacked_lstm3", ("lstm", "rnn", "stacked"),
                       "three stacked LSTM(6, return_sequences) layers",
                       55, lambda x: L.LSTM(6, return_sequences=True)(
                           L.LSTM(6, return_sequences=True)(L.LSTM(6, return_sequences=True)(x)))))

    def lstm_init(x, h0, c0):
        return L.LSTM(8, return_sequences=True, return_state=True)(x, initial_state=[h0, c0])
    cases.append(kcase("keras_lstm_initial_state", ("lstm", "rnn", "state"),
                       "LSTM(8) with initial_state=[h0, c0] model inputs (stateful-looking)",
                       56, lstm_init, inputs={"x": (T, F), "h0": (8,), "c0": (8,)},
                       feeds={"x": seq(56), "h0": rng(57).normal(size=(2, 8)).astype(np.float32),
                              "c0": rng(58).normal(size=(2, 8)).astype(np.float32)},
                       middle=True))

    def gru_init(x, h0):
        return L.GRU(8, return_sequences=True)(x, initial_state=h0)
    cases.append(kcase("keras_gru_initial_state", ("gru", "rnn", "state"),
                       "GRU(8) with an initial_state=h0 model input",
                       59, gru_init, inputs={"x": (T, F), "h0": (8,)},
                       feeds={"x": seq(59), "h0": rng(60).normal(size=(2, 8)).astype(np.float32)}))
    cases.append(kcase("keras_rnn_simplecell", ("rnn", "loop"),
                       "keras.layers.RNN(SimpleRNNCell(8), return_sequences): a generic RNN loop",
                       61, lambda x: L.RNN(L.SimpleRNNCell(8), return_sequences=True)(x)))
    cases.append(kcase("keras_rnn_stacked_cells", ("rnn", "lstm", "gru", "stacked", "loop"),
                       "keras.layers.RNN(StackedRNNCells([LSTMCell(8), GRUCell(6)]))",
                       62, lambda x: L.RNN(L.StackedRNNCells([L.LSTMCell(8), L.GRUCell(6)]),
                                           return_sequences=True)(x)))
    cases.append(kcase("keras_rnn_lstmcell_masked_state",
                       ("rnn", "lstm", "masking", "state", "loop"),
                       "Masking + keras.layers.RNN(LSTMCell(6), return_state)",
                       63, lambda x: L.RNN(L.LSTMCell(6), return_state=True)(L.Masking(0.0)(x)),
                       feeds={"x": seq(63, batch=3, masked=True)}))
    return cases


# ----------------------------------------------------------------------------- conversion

def onnx_ops(graph: onnx.GraphProto) -> set[tuple[str, str]]:
    ops = set()
    for node in graph.node:
        ops.add((node.domain, node.op_type))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= onnx_ops(attr.g)
            for g in attr.graphs:
                ops |= onnx_ops(g)
    return ops


def foreign_ops(model: onnx.ModelProto) -> list[str]:
    """Ops in the file that are no ONNX operator (TensorFlow ops tf2onnx left behind)."""
    bad = set()
    for domain, op in onnx_ops(model.graph):
        if domain not in ("", "ai.onnx") or not onnx.defs.has(op):
            bad.add(f"{domain + '.' if domain else ''}{op}")
    return sorted(bad)


def model_inputs(model: onnx.ModelProto) -> list[str]:
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def tf_reference(case: Case) -> list[np.ndarray]:
    if case.keras is not None:
        out = case.keras(list(case.feeds.values()) if len(case.feeds) > 1
                         else next(iter(case.feeds.values())))
    else:
        out = tf.function(case.fn, input_signature=case.signature)(*case.feeds.values())
    out = out if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(o) for o in tf.nest.flatten(out)]


def to_onnx(case: Case, opset: int, path: Path) -> onnx.ModelProto:
    if case.keras is not None:
        sig = [spec((None,) + tuple(i.shape[1:]), i.dtype, n)
               for n, i in zip(case.feeds, case.keras.inputs)]
        model, _ = tf2onnx.convert.from_keras(case.keras, input_signature=sig, opset=opset)
    else:
        model, _ = tf2onnx.convert.from_function(tf.function(case.fn),
                                                 input_signature=case.signature, opset=opset)
    bad = foreign_ops(model)
    if bad:
        raise RuntimeError(f"TensorFlow ops left in the ONNX graph: {', '.join(bad)}")
    names = model_inputs(model)
    if names != list(case.feeds):
        raise RuntimeError(f"graph inputs {names}, expected {list(case.feeds)} (a captured "
                           "constant became an input without initializer)")
    opts = onnxruntime.SessionOptions()
    opts.log_severity_level = 3
    onnxruntime.InferenceSession(model.SerializeToString(), opts,
                                 providers=["CPUExecutionProvider"])  # raises if ORT refuses
    onnx.save(model, path)
    return model


def saved_model(case: Case, folder: str) -> None:
    if case.keras is not None:
        tf.saved_model.save(case.keras, folder)
        return
    module = tf.Module()
    module.f = tf.function(case.fn, input_signature=case.signature)
    module.weights = list(case.variables)
    tf.saved_model.save(module, folder, signatures=module.f)


def saved_model_reference(folder: str, feeds: dict) -> dict[str, np.ndarray]:
    loaded = tf.saved_model.load(folder)
    out = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in feeds.items()})
    return {k: np.asarray(v) for k, v in out.items()}


class Generator:
    def __init__(self, only: str | None):
        versions = {"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__,
                    "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                    "openvino": ov.__version__, "numpy": np.__version__}
        self.tf = Corpus("tf", versions)
        self.ov = Corpus("tf-ov", versions)
        self.only = only
        self.failures: list[str] = []
        self.opsets: dict[str, list[int]] = {}

    def peers(self, path: Path, feeds: dict, outputs: list, case: Case) -> dict:
        runtimes = ("onnxruntime", "openvino") if path.suffix == ".onnx" else ("openvino",)
        return {rt: run_peer(rt, path, feeds, outputs, case.rtol, case.atol, exact_dtype=True)
                for rt in runtimes}

    def add_onnx(self, case: Case, reference: list[np.ndarray]) -> None:
        oldest = None
        errors: dict[int, str] = {}
        for opset in range(OLDEST_TRIED, NEWEST + 1):
            path = self.tf.path(f"{case.name}_op{opset}", ".onnx")
            try:
                model = to_onnx(case, opset, path)
                # the oldest opset counts only if ONNX Runtime then computes what TF does
                got = in_process_ort(path, case.feeds)
                verdict = compare(got, cast_like(model, reference), case.rtol, case.atol, True)
                if verdict != "ok":
                    path.unlink()
                    raise RuntimeError(f"converted file disagrees with TF in ONNX Runtime "
                                       f"({verdict})")
                oldest = opset
                break
            except Exception as exc:  # recorded: the export failure is the finding
                errors[opset] = message(exc)
        for line in opset_ranges(errors):
            self.failures.append(f"tf/{case.name}: {line}")
        if oldest is None:
            return
        opsets = [oldest]
        if case.middle and oldest < MIDDLE:
            opsets.append(MIDDLE)
        if oldest < NEWEST:
            opsets.append(NEWEST)
        kept = []
        for opset in opsets:
            name = f"{case.name}_op{opset}"
            path = self.tf.path(name, ".onnx")
            if opset != oldest:
                try:
                    to_onnx(case, opset, path)
                except Exception as exc:
                    self.failures.append(f"tf/{name}: {message(exc)}")
                    continue
            model = onnx.load(path)
            feeds = dict(case.feeds)
            outputs = cast_like(model, reference)
            peer = self.peers(path, feeds, outputs, case)
            if peer["onnxruntime"].startswith("mismatch") and peer["openvino"] != "ok":
                # neither runtime computes what TF does: the file computes something else
                self.failures.append(f"tf/{name}: converted file disagrees with TF "
                                     f"(ORT {peer['onnxruntime']}; OpenVINO {peer['openvino']})")
                path.unlink()
                continue
            converter = "tf2onnx.from_keras" if case.keras is not None \
                else "tf2onnx.from_function"
            description = case.description
            inits = {i.name for i in model.graph.initializer}
            if any(i.name in inits for i in model.graph.input):
                description += (f" (IR {model.ir_version}: initializers are also listed as "
                                "graph inputs, in Loop bodies too)")
            self.tf.add(name, path, feeds, outputs, converter=converter, opset=opset,
                        rtol=case.rtol, atol=case.atol, tags=case.tags,
                        description=description,
                        output_names=[o.name for o in model.graph.output], peer=peer)
            kept.append(opset)
            print(f"  tf/{name}: {self.tf.models[-1]['peer']}", flush=True)
        self.opsets[case.name] = kept
        if NEWEST in kept:
            self.add_onnx_frontend_ir(case, reference)

    def add_onnx_frontend_ir(self, case: Case, reference: list[np.ndarray]) -> None:
        """OpenVINO's ONNX frontend on the newest tf2onnx file, saved as IR (where it converts:
        it refuses every Loop tf2onnx writes, so these are the Keras LSTM/GRU files)."""
        source = self.tf.path(f"{case.name}_op{NEWEST}", ".onnx")
        name = f"{case.name}_onnxfe"
        try:
            model = ov.convert_model(str(source))
        except Exception:  # already recorded as the tf entry's "openvino" peer error
            return
        self.write_ir(case, name, model, lambda names: reference,
                      f"openvino.convert_model(tf2onnx ONNX opset {NEWEST})")

    def add_ir(self, case: Case) -> None:
        if case.ir_wrong:
            self.failures.append(f"tf-ov/{case.name}: {case.ir_wrong}")
            return
        with tempfile.TemporaryDirectory() as folder:
            try:
                saved_model(case, folder)
                ref = saved_model_reference(folder, case.feeds)
                model = ov.convert_model(folder)
            except Exception as exc:
                self.failures.append(f"tf-ov/{case.name}: {message(exc)}")
                return
            self.write_ir(case, case.name, model, lambda names: [ref[n] for n in names],
                          "openvino.convert_model(SavedModel)")
        if case.ov_keras_object:
            try:
                model = ov.convert_model(case.keras)
            except Exception as exc:
                self.failures.append(f"tf-ov/{case.name}_kerasobj: {message(exc)}")
                return
            reference = tf_reference(case)
            self.write_ir(case, f"{case.name}_kerasobj", model, lambda names: reference,
                          "openvino.convert_model(keras.Model)")

    def write_ir(self, case: Case, name: str, model, reference, converter: str) -> None:
        path = self.ov.path(name, ".xml")
        ov.save_model(model, path, compress_to_fp16=False)
        model = ov.Core().read_model(path)
        in_names = [i.get_any_name() for i in model.inputs]
        if sorted(in_names) != sorted(case.feeds):
            raise RuntimeError(f"{name}: IR inputs {in_names} vs feeds {list(case.feeds)}")
        feeds = {n: case.feeds[n] for n in in_names}
        out_names = [pick_name(o.get_names(), case) for o in model.outputs]
        outputs = reference(out_names)
        outputs = [np.asarray(o).astype(ov_dtype(m.get_element_type()))
                   for o, m in zip(outputs, model.outputs)]
        self.ov.add(name, path, feeds, outputs, converter=converter, opset=None,
                    rtol=case.rtol, atol=case.atol, tags=case.tags,
                    description=case.description, output_names=out_names,
                    peer=self.peers(path, feeds, outputs, case))
        print(f"  tf-ov/{name}: {self.ov.models[-1]['peer']}", flush=True)

    def run(self, cases: list[Case]) -> None:
        for case in cases:
            if self.only and self.only not in case.name:
                continue
            print(case.name, flush=True)
            reference = tf_reference(case)
            self.add_onnx(case, reference)
            self.add_ir(case)
        self.tf.save()
        self.ov.save()


def in_process_ort(path: Path, feeds: dict) -> list[np.ndarray]:
    opts = onnxruntime.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = 1
    sess = onnxruntime.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def opset_ranges(errors: dict[int, str]) -> list[str]:
    """``op7-op9: <message>`` lines, consecutive opsets with the same message merged."""
    lines, run = [], []
    for opset in sorted(errors):
        if run and errors[run[-1]] == errors[opset] and run[-1] == opset - 1:
            run.append(opset)
            continue
        if run:
            lines.append(run)
        run = [opset]
    if run:
        lines.append(run)
    return [f"op{r[0]}{'' if len(r) == 1 else f'-op{r[-1]}'}: {errors[r[0]]}" for r in lines]


def pick_name(names: set[str], case: Case) -> str:
    """The IR output's signature key (``output_0``, a Keras layer name), else any name."""
    plain = sorted(n for n in names if ":" not in n and "/" not in n)
    return plain[0] if plain else sorted(names)[0]


def ov_dtype(element_type) -> np.dtype:
    return np.dtype(element_type.to_dtype())


def cast_like(model: onnx.ModelProto, outputs: list[np.ndarray]) -> list[np.ndarray]:
    """TF's outputs in the dtypes the file declares (an int32 TF result for an int64 output)."""
    if len(outputs) != len(model.graph.output):
        raise RuntimeError(f"{len(outputs)} TF outputs, {len(model.graph.output)} in the file")
    res = []
    for o, info in zip(outputs, model.graph.output):
        dt = onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        res.append(np.asarray(o).astype(dt))
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="generate only the cases whose name contains this")
    args = parser.parse_args()
    gen = Generator(args.only)
    gen.run(loop_cases() + keras_cases())
    print(f"\nwrote {len(gen.tf.models)} tf entries, {len(gen.ov.models)} tf-ov entries")
    for name, opsets in gen.opsets.items():
        print(f"  opsets {name}: {opsets}")
    if gen.failures:
        print("export failures:")
        for line in gen.failures:
            print("  " + line)


if __name__ == "__main__":
    main()
