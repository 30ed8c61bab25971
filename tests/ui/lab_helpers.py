"""Driving a notebook in JupyterLab through `window.jupyterapp` (exposed by
--LabApp.expose_app_in_browser=True) rather than through fragile clicks on menus."""
import itertools
import time

_workspaces = itertools.count()

# The notebook panel that is open in the main area, its kernel status, and a summary of each
# code cell's execution (count, errors, output mime types), from the models, not the DOM.
_STATE_JS = """() => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext) return {ready: false};
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  const cells = [];
  for (const c of w.content.widgets) {
    if (c.model.type !== 'code') continue;
    const outs = c.model.outputs.toJSON();
    cells.push({
      count: c.model.executionCount,
      errors: outs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
      mimes: outs.flatMap(o => o.data ? Object.keys(o.data) : [o.output_type]),
      source: c.model.sharedModel.getSource().slice(0, 80),
    });
  }
  return {
    ready: true,
    kernel: kernel ? kernel.status : null,
    kernelName: kernel ? kernel.name : null,
    busy: w.content.widgets.some(c => c.model.type === 'code' && c.promptNode &&
                                       c.promptNode.textContent.includes('*')),
    cells,
  };
}"""


def notebook_state(page):
    return page.evaluate(_STATE_JS)


def open_notebook(page, lab, name, timeout=60):
    """Open notebooks/<name> in Lab and wait until its kernel is really there and idle.

    Running cells before the session has a kernel pops up the "Select Kernel" dialog and runs
    nothing, and the toolbar's idle indicator says idle before the kernel exists, so we poll
    the session's kernel object itself.
    """
    # a fresh workspace per notebook, so that Lab restores no tab from an earlier test
    workspace = f"ui{next(_workspaces)}"
    page.goto(lab.url(f"lab/workspaces/{workspace}/tree/{name}?reset"), wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout * 1000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout * 1000)
    page.wait_for_function(
        """(name) => {
          const w = window.jupyterapp.shell.currentWidget;
          if (!w || !w.context || !w.context.path.endsWith(name)) return false;
          const s = w.sessionContext && w.sessionContext.session;
          return !!(s && s.kernel && s.kernel.status === 'idle' && s.kernel.connectionStatus === 'connected');
        }""", arg=name, timeout=timeout * 1000)
    state = notebook_state(page)
    assert state["kernelName"] == "python3", state


def run_all(page, timeout=180):
    """Run every cell and wait until each code cell has an execution count and the kernel is
    idle again. Returns the final state; fails on the first cell that raised."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    state = None
    while time.monotonic() < deadline:
        state = notebook_state(page)
        if (not state["busy"] and all(c["count"] is None for c in state["cells"])
                and time.monotonic() - started > 10):
            # nothing started (the command raced the notebook's activation): ask again
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            started = time.monotonic()
        errors = [(i, e) for i, c in enumerate(state["cells"]) for e in c["errors"]]
        if errors:
            raise AssertionError(f"cell raised in the browser: {errors}")
        done = all(c["count"] is not None for c in state["cells"])
        if done and state["kernel"] == "idle" and not state["busy"]:
            return state
        time.sleep(0.25)
    raise AssertionError(f"cells did not finish within {timeout} s: {state}")


def scroll_into_view(page, locator):
    locator.scroll_into_view_if_needed()
    page.wait_for_timeout(150)


def shutdown_kernel(page):
    """Shut down the open notebook's kernel (each test starts its own)."""
    try:
        page.evaluate("""async () => {
            const w = window.jupyterapp.shell.currentWidget;
            if (w && w.sessionContext) await w.sessionContext.shutdown();
        }""")
    except Exception:
        pass
