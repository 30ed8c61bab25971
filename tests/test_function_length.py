"""No function longer than 60 lines: a function should fit on one screen.

Every function in microtorch/ is measured and held to the limit. PENDING lists the few that
are still longer, each by (file, function) and owned by someone who is splitting it: the list
may only shrink (a test fails once one of them is short, so that it is taken off).
`python tests/test_function_length.py` prints every function over the limit."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMIT = 60
PENDING = set()  # (_tensor_methods._more_methods was split by the api engineer, issue 13)


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


def test_no_long_function_in_microtorch():
    bad = [f for f in long_functions() if (f[0], f[2]) not in PENDING]
    assert bad == [], "\n".join(f"{p}:{line} {name}() is {n} lines (at most {LIMIT}): split it into steps"
                                for p, line, name, n in bad)


def test_the_pending_list_only_shrinks():
    still_long = {(p, name) for p, _, name, _ in long_functions()}
    assert PENDING <= still_long, f"no longer over {LIMIT} lines, take them off PENDING: {sorted(PENDING - still_long)}"


def test_the_measure_can_fail(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    found = long_functions(tmp_path)
    assert [(name, n) for _, _, name, n in found] == [("long", LIMIT + 1)]


if __name__ == "__main__":
    for p, line, name, n in long_functions():
        print(f"{'pending ' if (p, name) in PENDING else ''}{p}:{line} {name}() {n} lines")
