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


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem[:2] for p in SOURCES])
def test_every_check_says_not_yet_written_on_the_student_stub(src):
    """The student version's answer cells (solutions stripped by tools/make_assignments.py)
    give a failing check that tells the student to write the answer, not a crash."""
    spec = importlib.util.spec_from_file_location("make_assignments", ROOT / "tools" / "make_assignments.py")
    ma = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ma)
    setup, found = pairs(src)
    ns = {}
    exec(PREAMBLE, ns)
    for body in setup:
        if "%%" not in body.splitlines()[0]:
            exec(compile(body, f"<{src.stem} setup>", "exec"), ns)
    for solution, check_cell in found:
        try:
            exec(compile(ma.strip_solutions(solution), f"<{src.stem} student>", "exec"), ns)
        except NotImplementedError:
            pass
        *stmts, last = check_cell.strip().splitlines()
        result = eval(last, ns)
        assert not result.passed, f"{src.name}: {last} passes on the student stub"
        assert "not filled in yet" in result.reason or "still raises NotImplementedError" in result.reason, (
            f"{src.name}: {last}: {result.reason!r}")


# lines of a solution that only restate the task (a forward the question gives, the update asked for)
TASK_STATEMENTS = {"out = h @ W2 + b2", "p -= lr * p.grad", "p = x.softmax(0)", "alpha * x * y"}


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem[:2] for p in SOURCES])
def test_hints_and_docstrings_do_not_contain_the_solution(src):
    from microtorch.exercises import check
    from microtorch.exercises._registry import REGISTRY
    _, found = pairs(src)
    for solution, check_cell in found:
        name = check_cell.strip().splitlines()[-1].split("(")[0].split(".")[1]
        region = solution.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
        code = {ln.split("#")[0].strip() for ln in region.splitlines()} - {""}
        code = {c for c in code if len(c) > 12 and not c.startswith(("def ", "class ", "return ", "with "))} | \
            {c[len("return "):] for c in code if c.startswith("return ") and len(c) > 14}
        said = (check.hint(name).text + " " + REGISTRY[name].doc).replace(" ", "")
        leaked = [c for c in code if c.replace(" ", "") in said and c not in TASK_STATEMENTS]
        assert not leaked, f"{src.name}: the hint or docstring of check.{name} contains {leaked}"
