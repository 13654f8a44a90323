"""passes.pipelines: every pass has the one shape of `passes.base.Pass`, and every pipeline
leaves `ir.verify` passing, run whole or pass by pass, on the semantics and pass-test models."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest

from itergraph.errors import ModelError
from itergraph.ir import Graph, Value, verify
from itergraph.ir.clone import clone_graph, clone_node
from itergraph.passes.base import CONTRACT, Pass
from itergraph.passes.pipelines import NUMPY, OPENVINO_WRITE, XLA, run_pipeline, verifying
from passutil import load, loops

TESTS = Path(__file__).resolve().parents[1]
PIPELINES = {"NUMPY": NUMPY, "XLA": XLA, "OPENVINO_WRITE": OPENVINO_WRITE}
PASSES = sorted({p for ps in PIPELINES.values() for p in ps}, key=lambda p: p.name)


def _module(rel: str):
    """A test module by path (the semantics tests' directory is not on sys.path)."""
    path = TESTS / rel
    spec = importlib.util.spec_from_file_location(f"_pipeline_models_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _models() -> dict:
    loop_sem = _module("semantics/test_onnx_loop_semantics.py")
    scan_sem = _module("semantics/test_onnx_scan_semantics.py")
    rewrites = _module("passes/test_backend_rewrites.py")
    hoist = _module("passes/test_hoist_invariants.py")
    gather = _module("passes/test_iteration_gather.py")
    sliced = _module("passes/test_precompute_sliced.py")
    fission = _module("passes/test_gate_fission.py")
    layout = _module("passes/test_carried_layout.py")
    lists = _module("passes/test_sequence_scan_outputs.py")
    splits = _module("passes/test_split_sequence_reads.py")
    known = _module("passes/test_static_sequences.py")
    ragged = _module("passes/test_ragged_scan_joins.py")
    generation = _module("generation/models.py")
    return {
        "counter": lambda: load(loop_sem.counter_loop()),
        "counter_rank2": lambda: load(loop_sem.counter_loop((2, 3))),
        "while": lambda: load(loop_sem.while_model()),
        "while_no_trip_count": lambda: load(loop_sem.while_model(trip_input=False)),
        "scan": lambda: load(scan_sem.scan_sum_model([0], [0], [0, 0], [0, 0])),
        "scan_twice": lambda: load(scan_sem.scan_sum_model([1, 0], [0, 1], [1, 0], [1, 0],
                                                           twice=True)),
        "scan8": lambda: load(scan_sem.scan8_model()),
        "backend_rewrites": lambda: load(rewrites._model()),
        "hoist_loop": lambda: load(hoist._loop_model()),
        "hoist_nested": lambda: load(hoist._nested_model()),
        "hoist_ti_like": lambda: hoist._ti_like(True),
        "gather_loop": lambda: load(gather._gather_loop()),
        "sliced_rnn": lambda: load(sliced._rnn()),
        "sliced_ov_ti": lambda: sliced._ov_ti(),
        "lstm": lambda: load(fission._lstm()),
        "ssm": lambda: load(layout._ssm()),
        "list_append": lambda: load(lists._list_loop({"axis": 1, "new_axis": 0})),
        "split_rows": lambda: load(splits._rows_loop(1, 1)),
        "known_list": lambda: load(known.reads_model({"axis": 1})),
        "ragged_join": lambda: load(ragged.appended(1)),
        "greedy_search": lambda: load(generation.generation_model(
            "GreedySearch", ["max_length", "min_length", "repetition_penalty", "vocab_mask"],
            no_repeat_ngram_size=2)),
    }


MODELS = _models()


def test_every_pass_module_exposes_one_pass_under_its_name():
    for p in PASSES:
        assert isinstance(p, Pass) and p.in_place
        package = "itergraph.passes.cells" if p.name == "fuse_cells" else "itergraph.passes"
        module = importlib.import_module(f"{package}.{p.name}")
        assert [v for v in vars(module).values() if isinstance(v, Pass)] == [p]
        assert getattr(module, p.name) is p


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.name)
def test_every_pass_states_its_contract(p):
    doc = type(p).__doc__ or ""
    at = [doc.find(part) for part in CONTRACT]
    assert min(at) > 0 and at == sorted(at), f"{p.name}: the contract needs {CONTRACT}"
    for part in CONTRACT:  # each part says something
        assert len(doc.split(part, 1)[1].split("\n\n", 1)[0].strip()) > 10, (p.name, part)


def test_a_pass_without_a_contract_is_refused():
    with pytest.raises(TypeError, match="Guarantees:"):
        class NoGuarantees(Pass):
            """Applies to: every node. Returns: 0."""

            name = "no_guarantees"


class _Breaks(Pass):
    """A pass that breaks the graph, to see the check catch it.

    Applies to: the graph's outputs: one that nothing defines is added.

    Returns: 1.

    Guarantees: nothing; `ir.verify` fails afterwards.
    """

    name = "breaks"

    def __call__(self, graph: Graph) -> int:
        graph.outputs.append(Value("undefined"))
        return 1


def test_the_suite_verifies_after_every_pass():
    assert verifying()
    with pytest.raises(ModelError, match="after pass breaks"):
        run_pipeline([*NUMPY, _Breaks()], MODELS["counter"]())
    g = MODELS["counter"]()
    assert run_pipeline([_Breaks()], g, verify=False) == 1


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_every_pass_keeps_the_models_valid(pipeline, model):
    graph = MODELS[model]()
    verify(graph)
    for p in PIPELINES[pipeline]:
        copy = clone_graph(graph)
        run_pipeline([p], copy, verify=True)
        verify(copy)
    copy = clone_graph(graph)
    run_pipeline(PIPELINES[pipeline], copy, verify=True)
    verify(copy)


@pytest.mark.parametrize("model", MODELS)
def test_the_numpy_pipeline_keeps_a_loop_compiled_on_its_own_valid(model):
    # as the NumPy backend runs it: on a copy of one loop, which reads its inputs from outside
    for loop in loops(MODELS[model]()):
        copy = clone_node(loop, {})
        wrapper = Graph("wrapper", nodes=[copy], outputs=copy.outputs)
        run_pipeline(NUMPY, wrapper, verify=True)
        # a pass that makes it read a value from outside that it did not read before fails
        with pytest.raises(ModelError, match="after pass breaks"):
            run_pipeline([_Breaks()], wrapper, verify=True)


def test_the_models_exercise_every_pass():
    idle = [p.name for p in PASSES if not any(p(clone_graph(make())) for make in MODELS.values())]
    assert not idle
