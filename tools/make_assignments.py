#!/usr/bin/env python3
"""Write the student and teacher versions of the notebooks, for class or for nbgrader.

    .venv/bin/python tools/make_assignments.py              # every notebook (make assignments)
    .venv/bin/python tools/make_assignments.py 04 07        # the ones whose name starts so
    .venv/bin/python tools/make_assignments.py --no-strict  # check cells that never raise

It reads the built notebooks in notebooks/ (not the Chinese edition) and writes

    assignments/teacher/NN_name.ipynb   the solutions in
    assignments/student/NN_name.ipynb   each region between "### BEGIN SOLUTION" and
                                        "### END SOLUTION" replaced by `raise NotImplementedError()`
                                        (as nbgrader's own generate_assignment does),
                                        and the prose solutions (<details> blocks) removed

Exercise cells are marked in the notebook sources with tags: `solution` for the cell a student
writes, `check` for the cell that checks it (`check.<name>(...)`). Both versions carry
nbgrader's cell metadata (schema version 3): a solution cell is an "autograded answer", its
check cell an "autograder test" worth 1 point, locked, whose grade_id is the check's name.
Check cells are called with `strict=True`, so that a wrong answer raises AssertionError (what
nbgrader's autograder counts); --no-strict keeps them as they are, for a class without grading.
Outputs are empty. The folder is not committed (.gitignore).
"""
import copy
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "assignments"

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_CHECK = re.compile(r"^(?P<call>check\.(?P<name>\w+)\((?P<args>.*)\))\s*$")
_DETAILS = re.compile(r"\n*<details>.*?</details>\n*", re.S)


def _source(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell, text):
    cell["source"] = text.splitlines(keepends=True)


def strip_solutions(code):
    """Replace each BEGIN/END SOLUTION region by `raise NotImplementedError()` at its indentation
    (after a `# YOUR CODE HERE` line, as nbgrader's generate_assignment does)."""
    out, inside = [], False
    for line in code.splitlines():
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise ValueError(f"nested {BEGIN!r}:\n{code}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + "# YOUR CODE HERE", indent + "raise NotImplementedError()"]   # as nbgrader writes it
        elif stripped == END:
            if not inside:
                raise ValueError(f"{END!r} without {BEGIN!r}:\n{code}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN!r} without {END!r}:\n{code}")
    return "\n".join(out)


def strip_prose_solutions(markdown):
    """Remove every <details>...</details> block (the folded solutions and explanations)."""
    return _DETAILS.sub("\n\n", markdown).strip("\n")


def check_name(code):
    """The check a check cell calls: its last line is `check.<name>(...)`."""
    last = code.strip().splitlines()[-1] if code.strip() else ""
    m = _CHECK.match(last)
    if not m:
        raise ValueError(f"a cell tagged 'check' must end with a line check.<name>(...), got: {last!r}")
    return m.group("name")


def make_strict(code):
    lines = code.rstrip().splitlines()
    m = _CHECK.match(lines[-1])
    args = m.group("args").strip()
    lines[-1] = f"check.{m.group('name')}({args}{', ' if args else ''}strict=True)"
    return "\n".join(lines)


def _nbgrader(kind, grade_id):
    meta = {"grade": kind == "check", "solution": kind == "solution", "locked": kind == "check",
            "grade_id": grade_id, "schema_version": 3}
    if kind == "check":
        meta["points"] = 1
    return meta


def _exercise_ids(cells):
    """grade_id per cell index: the check's name for a check cell, name + '_answer' for the
    solution cell before it. A solution cell followed by an untagged code cell with an
    `assert` (a plain test, as in notebook 14) pairs with it as exercise_<k>; a solution cell
    with no test after it is an answer graded by hand elsewhere (solution only)."""
    ids, pending = {}, None
    for i, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            if pending is not None:
                ids[pending] = ("solution", f"answer_{pending}")
            pending = i
        elif "check" in tags:
            name = check_name(_source(cell))
            if pending is None:
                raise ValueError(f"check.{name}: no solution cell before its check cell")
            ids[pending], ids[i] = ("solution", f"{name}_answer"), ("check", name)
            pending = None
        elif pending is not None and cell["cell_type"] == "code":
            test = re.search(r"^\s*assert\b", _source(cell), re.M)
            k = sum(1 for kind, _ in ids.values() if kind == "check") + 1
            ids[pending] = ("solution", f"exercise_{k}_answer" if test else f"answer_{pending}")
            if test:
                ids[i] = ("check", f"exercise_{k}")
            pending = None
    if pending is not None:
        ids[pending] = ("solution", f"answer_{pending}")
    return ids


def versions(nb, strict=True):
    """(teacher, student) notebooks made from one built notebook."""
    teacher = copy.deepcopy(nb)
    ids = _exercise_ids(teacher["cells"])
    for i, cell in enumerate(teacher["cells"]):
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        if i in ids:
            kind, grade_id = ids[i]
            cell["metadata"]["nbgrader"] = _nbgrader(kind, grade_id)
            if kind == "check" and strict and "check" in cell["metadata"].get("tags", []):
                _set_source(cell, make_strict(_source(cell)))
    student = copy.deepcopy(teacher)
    for i, cell in enumerate(student["cells"]):
        if i in ids and ids[i][0] == "solution":
            _set_source(cell, strip_solutions(_source(cell)))
        elif cell["cell_type"] == "markdown":
            _set_source(cell, strip_prose_solutions(_source(cell)))
    student["cells"] = [c for c in student["cells"] if c["cell_type"] != "markdown" or _source(c).strip()]
    return teacher, student


def _write(nb, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n")


def main(argv):
    strict = "--no-strict" not in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if prefixes:
        paths = [p for p in paths if any(p.stem.startswith(x) for x in prefixes)]
    for path in paths:
        teacher, student = versions(json.loads(path.read_text()), strict=strict)
        _write(teacher, OUT / "teacher" / path.name)
        _write(student, OUT / "student" / path.name)
        n = sum(1 for c in teacher["cells"] if c["metadata"].get("nbgrader", {}).get("grade"))
        print(f"{path.name}: {n} checked exercise(s)")
    print(f"wrote {len(paths)} notebook(s) to {OUT.relative_to(ROOT)}/teacher and {OUT.relative_to(ROOT)}/student")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
