# Two commands set up everything: `make lab` and `make test`.
# Both create .venv on first use and are quick on a second run (stamp files).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest

.PHONY: lab lab-settings test unit notebooks ui sysdeps bench build lite clean assignments assignments-test fuzz sweep

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel

# The browser-side Graphviz (an npm package, one ES module with its WebAssembly inlined) that
# microtorch.viz uses when neither `dot` nor wasmtime is there. Fetched with npm, not in git.
GRAPHVIZ_JS := microtorch/viz/_vendor/graphviz.js
$(GRAPHVIZ_JS): tools/fetch_graphviz_js.py
	$(PYTHON) tools/fetch_graphviz_js.py --force

# make lab works without npm (dot or wasmtime lay graphs out there); the tests and builds need it.
$(VENV)/.lab-installed: pyproject.toml tools/fetch_graphviz_js.py | $(PY)
	$(PYTHON) tools/fetch_graphviz_js.py --optional
	MICROTORCH_GRAPHVIZ_JS=optional $(PY) -m pip install --quiet -e '.[lab]'
	touch $@

$(VENV)/.test-installed: pyproject.toml $(GRAPHVIZ_JS) | $(PY)
	$(PY) -m pip install --quiet -e '.[test,lab]'
	touch $@ $(VENV)/.lab-installed

# JupyterLite builds in a venv of its own: the Pyodide kernel's Lab extension, installed beside
# JupyterLab, breaks it (the extension needs JupyterLite's services).
LITE_VENV := .venv-lite
LITE_PY   := $(LITE_VENV)/bin/python
$(LITE_VENV)/.installed: pyproject.toml $(GRAPHVIZ_JS)
	$(PYTHON) -m venv $(LITE_VENV)
	$(LITE_PY) -m pip install --quiet --upgrade pip
	$(LITE_PY) -m pip install --quiet '.[lite]'
	touch $@

# nbgrader in a venv of its own too (tests/test_assignments.py grades two notebooks with it): it
# brings notebook 7 and server extensions that the JupyterLab of .venv should not load.
GRADER_VENV := .venv-grader
GRADER_PY   := $(GRADER_VENV)/bin/python
$(GRADER_VENV)/.installed: pyproject.toml $(GRAPHVIZ_JS)
	$(PYTHON) -m venv $(GRADER_VENV)
	$(GRADER_PY) -m pip install --quiet --upgrade pip
	$(GRADER_PY) -m pip install --quiet '.[grader]'
	touch $@

# ---- make lab ---------------------------------------------------------------------------------
# JupyterLab on notebooks/. Root (containers, Codespaces, lab VMs) gets --allow-root; the
# "Jupyter news" toast is turned off by the same overrides.json that binder/postBuild writes,
# inside the venv. LAB_FLAGS adds options, e.g. make lab LAB_FLAGS="--ip=0.0.0.0 --port=8890".
JUPYTER      := $(VENV)/bin/jupyter
LAB_SETTINGS := $(abspath $(VENV))/share/jupyter/lab/settings
LAB_FLAGS    ?=
ALLOW_ROOT   := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB_CMD       = $(JUPYTER) lab $(ALLOW_ROOT) --ServerApp.root_dir=$(abspath notebooks) \
                --LabApp.app_settings_dir=$(LAB_SETTINGS) $(LAB_FLAGS)

$(LAB_SETTINGS)/overrides.json: binder/postBuild
	NB_PYTHON_PREFIX=$(abspath $(VENV)) bash binder/postBuild

lab-settings: $(LAB_SETTINGS)/overrides.json

lab: $(VENV)/.lab-installed lab-settings
	@echo "make lab: JupyterLab on notebooks/; open the http://127.0.0.1:... URL printed below (Ctrl-C stops it)"
	$(LAB_CMD)

sysdeps:
	@bash .ci/sysdeps.sh

# ---- make build, make lite ---------------------------------------------------------------------
# The sdist and wheel in dist/ (they carry the browser Graphviz: installing them needs no npm).
build: $(LITE_VENV)/.installed
	rm -rf dist && $(LITE_PY) -m build --outdir dist .

# A static JupyterLite site in _output/ (any static host serves it; see docs/deploy.md).
# LITE_FLAGS go to `jupyter lite build`, e.g. LITE_FLAGS="--pyodide <url of Pyodide's full tarball>".
LITE_OUT   ?= _output
LITE_FLAGS ?=
lite: $(LITE_VENV)/.installed
	$(LITE_PY) tools/lite_build.py --output-dir $(LITE_OUT) -- $(LITE_FLAGS)

# Unit tests, then notebooks, then the browser tests: three pytest calls so that
# the nbmake plugin (about 2 s to load) is only paid where it is used.
# pytest exits 5 when a folder holds no tests yet; that is not a failure here.
test: sysdeps $(VENV)/.test-installed $(LITE_VENV)/.installed $(GRADER_VENV)/.installed lab-settings
	MICROTORCH_LITE_PYTHON=$(abspath $(LITE_PY)) MICROTORCH_NBGRADER_PYTHON=$(abspath $(GRADER_PY)) \
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

# The differential fuzzer's long profile (docs/testing.md): 30,000 programs against torch on
# 2 processes, counts by category; `make test` runs its fixed seeds only.
fuzz: $(VENV)/.test-installed
	$(PY) -m tests.fuzz -n 30000 --jobs 2

# The API sweep's long profile (docs/testing.md): every bad-argument list for every public callable,
# beside torch; `make test` runs a stable 30% of them.
sweep: $(VENV)/.test-installed
	MICROTORCH_SWEEP_LONG=1 $(PYTEST) -p no:nbmake -q tests/test_api_sweep.py

bench: $(VENV)/.test-installed
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) $(LITE_VENV) $(GRADER_VENV) .pytest_cache build dist _output microtorch/viz/_vendor
