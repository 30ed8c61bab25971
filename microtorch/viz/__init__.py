"""microtorch.viz: see what autograd does, in a notebook.

    viz.draw(loss)                       the grad_fn DAG (a graphviz.Digraph)
    with viz.record() as tape: ...       a tape of the engine's events
    viz.step_backward(loss)              step through backward (a widget), or viz.Stepper(tape)
    viz.hook_timeline(tape)              hook firings in swimlanes, with before/after
    viz.gradcheck(f, inputs)             numerical | analytical | |difference| heatmaps
    viz.eps_sweep(f, inputs)             finite-difference error against eps
    viz.blame(loss)                      which node's backward is wrong
    viz.explore(loss, module=model)      a model's graph collapsed to its modules; click to open
    viz.save(obj, "file.html")           static export (HTML, SVG, PNG)
    viz.set_options(scale=1.5, lang="en") text size of every picture (projector), language

The widget (anywidget) and matplotlib are imported on first use.
"""
from .graph import DAG, GraphvizError, RendererNotFound, draw, renderer_name  # noqa: F401
from .record import Tape, record  # noqa: F401
from .export import save  # noqa: F401
from ._options import get_options, set_options  # noqa: F401

_LAZY = {
    "Stepper": "stepper", "step_backward": "stepper", "Step": "stepper",
    "hook_timeline": "hooks", "HookTimeline": "hooks",
    "gradcheck": "jacobian", "eps_sweep": "jacobian", "GradcheckView": "jacobian",
    "EpsSweep": "jacobian", "heatmap_data": "jacobian",
    "blame": "_blame", "BlameReport": "_blame", "explore": "_explore", "ModelExplorer": "_explore",
}


def __getattr__(name):
    import importlib
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'microtorch.viz' has no attribute {name!r}")
    value = getattr(importlib.import_module("." + mod, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
