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
