"""`import microtorch` pulls in numpy and nothing heavy: not the visualizer's dependencies,
and never torch (the test oracle)."""
import subprocess
import sys

FORBIDDEN = ["graphviz", "ipywidgets", "anywidget", "matplotlib", "torch"]

SCRIPT = """
import sys
import microtorch
x = microtorch.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
import microtorch.autograd, microtorch.ops
loaded = sorted({m.split('.')[0] for m in sys.modules})
print(' '.join(loaded))
"""


def test_import_microtorch_imports_no_viz_dependency_and_no_torch():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "microtorch" in loaded and "numpy" in loaded
    bad = [m for m in FORBIDDEN if m in loaded]
    assert not bad, f"import microtorch imported {bad}"


def test_the_subprocess_check_can_fail():
    out = subprocess.run([sys.executable, "-c", "import json, sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    assert "json" in out.stdout.split()


# ---- layers: the import graph drawn from the source (tools/import_graph.py) ----------------------
import ast  # noqa: E402
import importlib.util  # noqa: E402
import pathlib  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def test_every_module_has_a_layer():
    graph = import_graph.build_graph()
    assert len(graph) > 50
    assert [m for m in graph if import_graph.layer_of(m) is None] == []


def test_no_import_goes_up_a_layer_not_even_lazily():
    bad = import_graph.violations(import_graph.build_graph())
    assert bad == [], "\n".join(f"{m}:{line} imports {t}{' (inside a function)' if lazy else ''}: it is in a "
                                f"higher layer; register with the lower layer instead" for m, line, t, lazy in bad)


def test_the_layer_check_catches_an_upward_import():
    graph = import_graph.build_graph()
    graph["microtorch.autograd.function"] = graph["microtorch.autograd.function"] + [
        ("microtorch.func", 1, True), ("microtorch.autograd.engine", 2, False)]
    found = {(m, t) for m, _, t, _ in import_graph.violations(graph)}
    assert found == {("microtorch.autograd.function", "microtorch.func"),
                     ("microtorch.autograd.function", "microtorch.autograd.engine")}


def test_imports_inside_functions_and_relative_imports_are_resolved():
    edges = import_graph.build_graph()["microtorch._tensor"]
    assert ("microtorch.autograd._hooks", True) in {(t, lazy) for t, _, lazy in edges}   # inside a method
    assert "microtorch._dtype" in {t for t, _, _ in edges}                              # `from . import _dtype`


def test_tensor_and_the_core_import_nothing_above_them():
    graph = import_graph.build_graph()
    for mod in ("microtorch._tensor", "microtorch.autograd.function", "microtorch.autograd.node",
                "microtorch.autograd.saved", "microtorch.autograd.views"):
        assert {import_graph.layer_of(t) for t, _, _ in graph[mod]} <= {0, 1}, mod


def test_func_plugs_into_autograd_only_through_the_extension_point():
    """func/ never assigns attributes of autograd or ops modules (no patching from outside);
    it registers with autograd/extension.py."""
    patched = []
    for path in sorted((ROOT / "microtorch" / "func").glob("*.py")):
        tree = ast.parse(path.read_text())
        lower = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level and
                 (n.module or "").split(".")[0] in ("autograd", "ops") for a in n.names}
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in lower:
                        patched.append(f"{path.name}:{n.lineno} sets {t.value.id}.{t.attr}")
    assert patched == []
    text = (ROOT / "microtorch" / "func" / "__init__.py").read_text()
    assert "extension.register(" in text


def test_architecture_doc_shows_the_current_import_graph():
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert import_graph.render() in doc, ("docs/ARCHITECTURE.md is out of date: run "
                                          "`python tools/import_graph.py --update`")
