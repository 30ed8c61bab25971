# Two commands set up everything: `make lab` and `make test`.
# Both create .venv on first use and are quick on a second run (stamp files).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest

.PHONY: lab test unit notebooks ui sysdeps bench clean assignments assignments-test

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel

$(VENV)/.lab-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[lab]'
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,lab]'
	touch $@ $(VENV)/.lab-installed

lab: $(VENV)/.lab-installed
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

sysdeps:
	@bash .ci/sysdeps.sh

# Unit tests, then notebooks, then the browser tests: three pytest calls so that
# the nbmake plugin (about 2 s to load) is only paid where it is used.
# pytest exits 5 when a folder holds no tests yet; that is not a failure here.
test: $(VENV)/.test-installed sysdeps
	$(PYTEST) -p no:nbmake -q tests --ignore=tests/ui
	$(PYTEST) -q --nbmake --nbmake-timeout=600 notebooks || [ $$? -eq 5 ]
	$(PYTEST) -p no:nbmake -q tests/ui || [ $$? -eq 5 ]

unit: $(VENV)/.test-installed
	$(PYTEST) -p no:nbmake -q tests --ignore=tests/ui

# Student and teacher versions of the notebooks (nbgrader metadata) in assignments/; see docs/teaching.md.
# assignments-test runs every teacher version top to bottom (the unit tests run only a few).
assignments: | $(PY)
	$(PY) tools/make_assignments.py

assignments-test: $(VENV)/.test-installed
	MICROTORCH_ALL_ASSIGNMENTS=1 $(PYTEST) -p no:nbmake -q tests/test_assignments.py

bench: $(VENV)/.test-installed
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache
