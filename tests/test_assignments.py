"""`make assignments` (tools/make_assignments.py): student versions hold no solution, both
versions are valid notebooks with nbgrader's cell metadata (schema version 3, checked here
field by field against nbgrader's rules, and with nbgrader itself, in .venv-grader), and
the teacher version runs top to bottom. Executing every notebook is slow: the unit tests run a
few; `make assignments-test` (MICROTORCH_ALL_ASSIGNMENTS=1) runs them all."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))       # notebook 14 tests with plain asserts
EXECUTE = [p for p in NOTEBOOKS if os.environ.get("MICROTORCH_ALL_ASSIGNMENTS") or p.stem[:2] in ("03", "07")]


def _tool():
    spec = importlib.util.spec_from_file_location("make_assignments", ROOT / "tools" / "make_assignments.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MA = _tool()


def _src(cell):
    return "".join(cell["source"])


def _versions(path, strict=True):
    return MA.versions(json.loads(path.read_text()), strict=strict)


def _solution_only_lines(teacher):
    """Lines that occur in the teacher version only inside BEGIN/END SOLUTION regions."""
    inside, outside = set(), set()
    for cell in teacher["cells"]:
        flag = False
        for line in _src(cell).splitlines():
            s = line.strip()
            if s in (MA.BEGIN, MA.END):
                flag = s == MA.BEGIN
                continue
            if s:
                (inside if flag else outside).add(s)
    return inside - outside


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_student_version_has_no_solution_text(path):
    teacher, student = _versions(path)
    secret = _solution_only_lines(teacher)
    assert secret, f"{path.name}: no solution region found"
    text = "\n".join(_src(c) for c in student["cells"])
    leaked = [s for s in secret if s in {ln.strip() for ln in text.splitlines()}]
    assert not leaked, f"{path.name}: solution lines in the student version: {leaked}"
    assert MA.BEGIN not in text and MA.END not in text and "<details>" not in text
    n_solution = sum("solution" in c["metadata"].get("tags", []) for c in student["cells"])
    assert text.count("raise NotImplementedError()") >= n_solution >= 3
    source = (ROOT / "tools" / "notebook_src" / f"{path.stem}.py").read_text()
    assert ("<details>" in source) == ("<details>" in "\n".join(_src(c) for c in teacher["cells"]))


def _check_nbgrader_cell(cell):
    """nbgrader's v3 schema (nbgraderformat/v3.json) and MetadataValidatorV3's extra rules."""
    meta = cell["metadata"]["nbgrader"]
    allowed = {"schema_version", "grade", "locked", "solution", "task", "grade_id", "points", "checksum", "cell_type"}
    assert set(meta) <= allowed and {"schema_version", "grade", "locked", "solution"} <= set(meta), meta
    assert meta["schema_version"] == 3
    assert all(isinstance(meta[k], bool) for k in ("grade", "locked", "solution"))
    if meta["grade"] or meta["solution"] or meta["locked"]:
        assert re.fullmatch(r"[a-zA-Z0-9_\-]+", meta["grade_id"]), meta
    if meta["grade"]:
        assert isinstance(meta["points"], (int, float)) and meta["points"] >= 0
    else:
        assert "points" not in meta
    if cell["cell_type"] == "markdown":
        assert meta["grade"] == meta["solution"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_both_versions_valid_nbformat_with_nbgrader_metadata(path):
    import nbformat
    for nb in _versions(path):
        node = nbformat.reads(json.dumps(nb), as_version=4)
        nbformat.validate(node)
        graded = [c for c in node.cells if "nbgrader" in c.metadata]
        ids = [c.metadata.nbgrader.grade_id for c in graded]
        assert len(ids) == len(set(ids)), "grade ids must be unique"
        for c in graded:
            _check_nbgrader_cell(c)
        checks = [c for c in graded if c.metadata.nbgrader.grade]
        answers = [c for c in graded if c.metadata.nbgrader.solution]
        assert len(checks) == len(answers) >= 3
        assert all(c.metadata.nbgrader.locked for c in checks)
        assert all("strict=True" in c.source for c in checks if "check" in c.metadata.get("tags", []))
        assert all(not c.metadata.nbgrader.locked and c.cell_type == "code" for c in answers)
        try:
            from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
        except ImportError:
            continue
        MetadataValidatorV3().validate_nb(node)


def test_strip_solutions_keeps_indentation_and_rejects_unbalanced_regions():
    code = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
    assert MA.strip_solutions(code) == "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    with pytest.raises(ValueError):
        MA.strip_solutions("### BEGIN SOLUTION\nx = 1\n")
    with pytest.raises(ValueError):
        MA.strip_solutions("x = 1\n### END SOLUTION\n")
    md = "Question.\n\n<details><summary>Solution</summary>\n\n2x\n</details>\n\n**2.** Next."
    assert MA.strip_prose_solutions(md) == "Question.\n\n**2.** Next."
    assert MA.make_strict("check.h_prime(answer)") == "check.h_prime(answer, strict=True)"
    with pytest.raises(ValueError):
        MA.check_name("print(1)")


def _execute(nb, path, allow_errors=False):
    import nbformat
    from nbclient import NotebookClient
    node = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(node, timeout=600, kernel_name="python3", allow_errors=allow_errors,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return node


@pytest.mark.parametrize("path", EXECUTE, ids=[p.stem[:2] for p in EXECUTE])
def test_teacher_version_runs_top_to_bottom_and_student_checks_all_fail(path):
    teacher, student = _versions(path)
    _execute(teacher, path)                  # strict checks: a failing reference would raise
    ran = _execute(student, path, allow_errors=True)
    for cell in ran.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert errors and errors[0].ename in ("AssertionError", "NameError"), (
                f"{path.name}: {cell.source} passed (or failed oddly) on the student version: {errors}")


def _grader_python():
    """The Python that has nbgrader: `make test` builds .venv-grader for it (nbgrader brings
    notebook 7 and server extensions, which stay out of the JupyterLab venv) and names it in
    MICROTORCH_NBGRADER_PYTHON; elsewhere this interpreter if it has nbgrader, else skip."""
    python = os.environ.get("MICROTORCH_NBGRADER_PYTHON")
    if python:
        return python
    pytest.importorskip("nbgrader")
    return sys.executable


_SCORES = """
import json, sys
from nbgrader.api import Gradebook
with Gradebook(sys.argv[1]) as gb:
    print(json.dumps({s: [gb.find_submission("ps", s).score, gb.find_submission("ps", s).max_score]
                      for s in sys.argv[2:]}))
"""


def test_nbgrader_generates_the_same_student_version_and_autogrades_it(tmp_path):
    """Import the teacher versions of two notebooks into nbgrader as an assignment: its release
    must hold the same answer cells as our student version, and autograde must give every point
    to the teacher version and none to the student one."""
    python = _grader_python()
    paths = [p for p in NOTEBOOKS if p.stem[:2] in ("01", "07")]
    (tmp_path / "source" / "ps").mkdir(parents=True)
    for p in paths:
        teacher, student = _versions(p)
        (tmp_path / "source" / "ps" / p.name).write_text(json.dumps(teacher))
        (tmp_path / f"{p.stem}.student.json").write_text(json.dumps(student))
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(tmp_path)!r}\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=str(Path(python).parent) + os.pathsep + os.environ["PATH"])
    run = lambda *args: subprocess.run([python, *args], cwd=tmp_path, env=env, check=True, capture_output=True,
                                       text=True).stdout
    run("-m", "nbgrader", "generate_assignment", "ps", "--force")
    for p in paths:
        released = json.loads((tmp_path / "release" / "ps" / p.name).read_text())
        ours = json.loads((tmp_path / f"{p.stem}.student.json").read_text())
        answers = lambda nb: [_src(c) for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
        assert answers(released) == answers(ours)
    for student, folder in (("teacher", "source"), ("stub", "release")):
        run("-m", "nbgrader", "db", "student", "add", student)
        shutil.copytree(tmp_path / folder / "ps", tmp_path / "submitted" / student / "ps")
    run("-m", "nbgrader", "autograde", "ps", "--force")
    scores = json.loads(run("-c", _SCORES, f"sqlite:///{tmp_path / 'gradebook.db'}", "teacher", "stub"))
    assert scores == {"teacher": [6.0, 6.0], "stub": [0.0, 6.0]}
