"""Shapes known before a run: ONNX's shape inference applied to the IR (`infer_shapes`) and
input shapes fixed by the user, with the ``If`` nodes they decide inlined (`fix_shapes`).

Above the frontends (inference runs through the ONNX writer's node forms) and below
`itergraph.model` (``Model.with_input_shapes``).
"""
