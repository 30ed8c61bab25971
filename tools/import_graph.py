"""microtorch's import graph, drawn from the source with `ast`, and its layers.

    python tools/import_graph.py            # print the layer diagram and the edges between layers
    python tools/import_graph.py --update   # rewrite it into docs/ARCHITECTURE.md (between the markers)

Every `import` counts, at the top of a module or inside a function (a lazy import is still a
dependency). tests/test_layering.py fails on an import that goes up a layer, and checks that
docs/ARCHITECTURE.md shows the graph this script draws.
"""
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "microtorch"

# lowest first; a module belongs to the first layer with a matching prefix (most specific first)
LAYERS = [
    ("base", "numpy helpers, grad mode, anomaly mode, hook handles and the event stream",
     ["microtorch._dtype", "microtorch._fma", "microtorch._cephes_f32", "microtorch._double_float", "microtorch._kernel_exp", "microtorch._kernel_gelu", "microtorch._kernel_log", "microtorch._libm_f32", "microtorch._quiet", "microtorch._user_line", "microtorch._meta", "microtorch._inference", "microtorch._printing", "microtorch.autograd._hooks", "microtorch.autograd.grad_mode",
      "microtorch.autograd.anomaly_mode"]),
    ("core", "Tensor; Function, ctx, Node, SavedTensor; views and version counters; the extension point",
     ["microtorch._tensor", "microtorch._random", "microtorch.autograd.node", "microtorch.autograd.saved",
      "microtorch.autograd.views", "microtorch.autograd.function", "microtorch.autograd.extension"]),
    ("ops", "the differentiable ops (each a Function) and the Tensor methods that call them",
     ["microtorch.ops", "microtorch._tensor_methods", "microtorch._creation"]),
    ("autograd", "the engine, autograd.grad/backward, forward-mode AD, functional, gradcheck",
     ["microtorch.autograd"]),
    ("transforms", "func (vmap, grad, jacrev...), nn, optim, data, the public namespace",
     ["microtorch.func", "microtorch.nn", "microtorch.optim", "microtorch.utils", "microtorch.testing",
      "microtorch._serialization", "microtorch"]),
    ("viz", "the visualizer (graphviz, widgets, matplotlib)", ["microtorch.viz"]),
    ("exercises", "checks a student calls on an answer, explained with viz", ["microtorch.exercises"]),
]


def module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules():
    """{module name: path} for every .py file of the package."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(mod, path, node, known):
    """The microtorch modules an Import / ImportFrom node names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "microtorch"]
    if node.level == 0:
        base = node.module or ""
        if base.split(".")[0] != "microtorch":
            return []
    else:
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            package = package.rsplit(".", 1)[0]
        base = package + ("." + node.module if node.module else "")
    out = []
    for a in node.names:  # `from pkg import sub` names the submodule when there is one
        sub = f"{base}.{a.name}"
        out.append(sub if sub in known else base)
    return out


def build_graph():
    """{module: [(imported module, line, lazy)]}: lazy is True for an import inside a function."""
    known = modules()
    graph = {}
    for mod, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lazy = node.col_offset > 0 and not _at_module_level(tree, node)
                for target in _resolve(mod, path, node, known):
                    if target != mod:
                        edges.append((target, node.lineno, lazy))
        graph[mod] = edges
    return graph


def _at_module_level(tree, node):
    """True for an import in a module-level try/if block (indented but not inside a function)."""
    for stmt in tree.body:
        if stmt is node:
            return True
        if isinstance(stmt, (ast.Try, ast.If)) and any(n is node for n in ast.walk(stmt)):
            return not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and
                           any(m is node for m in ast.walk(n)) for n in ast.walk(stmt))
    return False


def layer_of(mod):
    best, best_len = None, -1
    for i, (_, _, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def violations(graph):
    """Imports that go up a layer: [(module, line, imported module, lazy)]."""
    out = []
    for mod, edges in graph.items():
        for target, line, lazy in edges:
            if layer_of(target) > layer_of(mod):
                out.append((mod, line, target, lazy))
    return out


def layer_edges(graph):
    """{(from layer, to layer): number of imports} between different layers."""
    counts = {}
    for mod, edges in graph.items():
        for target, _, _ in edges:
            a, b = LAYERS[layer_of(mod)][0], LAYERS[layer_of(target)][0]
            if a != b:
                counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def render(graph=None):
    """The layer diagram as markdown: layers top to bottom with their modules, then who imports whom."""
    graph = graph if graph is not None else build_graph()
    lines = ["```"]
    for i in reversed(range(len(LAYERS))):
        name, what, _ = LAYERS[i]
        mods = sorted(m.replace("microtorch.", "").replace("microtorch", "(microtorch)") for m in graph
                      if layer_of(m) == i)
        lines.append(f"{name:<11} {what}")
        lines.append(" " * 12 + ", ".join(_collapse(mods)))
    lines.append("```")
    lines.append("")
    lines.append("Who imports whom (x: some module of the row's layer imports one of the column's):")
    lines.append("")
    lines.append("| imports → | " + " | ".join(n for n, _, _ in LAYERS) + " |")
    lines.append("|---" * (len(LAYERS) + 1) + "|")
    counts = layer_edges(graph)
    for a, _, _ in reversed(LAYERS):
        lines.append(f"| {a} | " + " | ".join("x" if (a, b) in counts else "" for b, _, _ in LAYERS) + " |")
    return "\n".join(lines) + "\n"


def _collapse(mods):
    """autograd.node, autograd.saved stay; ops, ops.shape, ops.reduce -> ops/ once."""
    out = []
    for m in mods:
        first = m.split(".")[0]
        head = first + "/" if first in ("ops", "nn", "func", "optim", "viz", "utils", "exercises") else m
        if head not in out:
            out.append(head)
    return out


DOC = ROOT / "docs" / "ARCHITECTURE.md"
BEGIN, END = "<!-- import-graph: generated by tools/import_graph.py -->", "<!-- /import-graph -->"


def update_doc():
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + BEGIN + "\n" + render() + END + tail)


if __name__ == "__main__":
    if "--update" in sys.argv:
        update_doc()
    g = build_graph()
    sys.stdout.write(render(g))
    bad = violations(g)
    for mod, line, target, lazy in bad:
        print(f"UP: {mod}:{line} imports {target}{' (lazily)' if lazy else ''}")
    sys.exit(1 if bad else 0)
