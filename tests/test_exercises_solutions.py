"""Every checked exercise of every notebook passes on the reference solution written in its
source (tools/notebook_src/NN_*.py), run in a fresh namespace: the solution cells of the
exercise section must not depend on the notebook's earlier state, only on its setup cells."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in (ROOT / "tools" / "notebook_src").glob("[01]*.py") if p.stem[:2] <= "13")
PREAMBLE = "import math\nimport numpy as np\nimport microtorch as mt\nfrom microtorch.autograd import Function\n"


def _parse():
    spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.parse


def exercise_cells(src):
    """The cells after the '## Exercises' heading: (kind, source, tags)."""
    cells = _parse()(src.read_text())
    start = next(i for i, (kind, body, _) in enumerate(cells) if kind == "markdown" and "## Exercises" in body)
    return cells[start:]


def pairs(src):
    """(setup sources, [(solution source, check source)]) of one notebook."""
    setup, found, pending = [], [], None
    for kind, body, tags in exercise_cells(src):
        if kind != "code":
            continue
        if "solution" in tags:
            pending = body
        elif "check" in tags:
            found.append((pending, body))
            pending = None
        else:
            setup.append(body)
    return setup, found


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem[:2] for p in SOURCES])
def test_every_exercise_passes_on_its_reference_solution(src):
    setup, found = pairs(src)
    assert len(found) >= 3, f"{src.name} has {len(found)} checked exercises, fewer than 3"
    ns = {}
    exec(PREAMBLE, ns)
    for body in setup:
        if "%%" not in body.splitlines()[0]:
            exec(compile(body, f"<{src.stem} setup>", "exec"), ns)
    for solution, check_cell in found:
        assert solution is not None, f"{src.name}: a check cell without a solution cell before it:\n{check_cell}"
        assert "### BEGIN SOLUTION" in solution and "### END SOLUTION" in solution, solution
        exec(compile(solution, f"<{src.stem} solution>", "exec"), ns)
        *stmts, last = check_cell.strip().splitlines()
        exec("\n".join(stmts), ns)
        result = eval(last, ns)
        assert result.passed, f"{src.name}: {last} failed on the reference solution:\n{result!r}"
