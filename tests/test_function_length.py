"""No function longer than 60 lines: a function should fit on one screen.

Every function in microtorch/ is measured; the limit is enforced on the files in ENFORCED
(the core and autograd, whose owners keep them short). Add a file or folder to ENFORCED once
its long functions are split; `python tests/test_function_length.py` lists the rest."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMIT = 60
ENFORCED = [
    "microtorch/autograd/",
    "microtorch/_tensor.py",
    "microtorch/ops/_op.py",
    "microtorch/ops/inplace.py",
    "microtorch/ops/__init__.py",
    "microtorch/optim/",
]


def long_functions(root=ROOT / "microtorch", limit=LIMIT):
    """[(path relative to the repository, line, name, length)] of every function over `limit` lines
    (from `def` to its last line, decorators and docstring included)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                length = node.end_lineno - first + 1
                if length > limit:
                    out.append((path.relative_to(root.parent).as_posix(), node.lineno, node.name, length))
    return out


def _enforced(path):
    return any(path == e or (e.endswith("/") and path.startswith(e)) for e in ENFORCED)


def test_no_long_function_in_the_enforced_files():
    bad = [f for f in long_functions() if _enforced(f[0])]
    assert bad == [], "\n".join(f"{p}:{line} {name}() is {n} lines (at most {LIMIT}): split it into steps"
                                for p, line, name, n in bad)


def test_the_measure_can_fail(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    found = long_functions(tmp_path)
    assert [(name, n) for _, _, name, n in found] == [("long", LIMIT + 1)]


if __name__ == "__main__":
    for p, line, name, n in long_functions():
        print(f"{'enforced ' if _enforced(p) else ''}{p}:{line} {name}() {n} lines")
