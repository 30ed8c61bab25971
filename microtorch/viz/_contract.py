"""The graphviz.Digraph contract of `viz.draw`'s result, with or without the `dot` program.

Students bring habits from torchviz and the graphviz package: `dag.render("g", format="png")`,
`dag.view()`, `dag.pipe(format="svg")`, `dag.save()`, `dag.source`. These keep graphviz
0.21's signatures (its `render` and `view` call `save(..., skip_existing=None)`). With `dot`
on PATH they are graphviz's own; without it, SVG is laid out by WebAssembly Graphviz (or the
deployment's layout module), PNG/PDF/PS are drawn from that SVG by cairosvg (`_raster`), and
other formats raise graphviz's ExecutableNotFound with the fix.
"""
import os

import graphviz

from ._i18n import tr

_SAVE_EXTS = (".svg", ".png", ".pdf", ".html", ".htm")


def _has_dot():
    import shutil
    return shutil.which("dot") is not None


class _NoDot(graphviz.ExecutableNotFound):
    """graphviz's own exception type, with a message that says what works instead."""

    def __init__(self, fmt):
        RuntimeError.__init__(self, tr("{fmt} output needs the Graphviz `dot` program, which is not on PATH; "
                                       "use format='svg' or 'png' (made without it; png and pdf need "
                                       "pip install cairosvg), or apt-get install graphviz").format(fmt=fmt))


def _without_dot(dag, fmt, themed=True):
    """The graph as `fmt` bytes when `dot` is missing: SVG laid out by WebAssembly Graphviz
    (themed for light and dark, or Graphviz's own), PNG/PDF/PS drawn from it by cairosvg."""
    from . import _raster
    if fmt == "svg":
        svg = dag.svg(standalone=True)
        return (svg if themed else dag._svg).encode("utf-8")
    if fmt in _raster.RASTER_FORMATS and _raster.available():
        dag.svg()                          # lays out once (cached)
        return _raster.rasterize(dag._svg, fmt)
    raise _NoDot(fmt)


class GraphvizContract:
    """save / render / view / pipe with graphviz.Digraph's signatures (mixed into DAG)."""

    def save(self, filename=None, directory=None, *, skip_existing=False):
        """Write the graph. .svg (themed, standalone), .png/.pdf (needs `dot`), .html (a page);
        no extension, .gv or .dot: the DOT source, exactly as graphviz.Digraph.save."""
        from .export import save_dag
        ext = os.path.splitext(os.fspath(filename))[1].lower() if filename is not None else ""
        if ext not in _SAVE_EXTS:
            return super().save(filename, directory=directory, skip_existing=skip_existing)
        path = os.path.join(os.fspath(directory), os.fspath(filename)) if directory is not None else os.fspath(filename)
        if skip_existing and os.path.exists(path):
            return path
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        return save_dag(self, path)

    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None, renderer=None,
               formatter=None, neato_no_op=None, quiet=False, quiet_view=False, *, outfile=None, engine=None,
               raise_if_result_exists=False, overwrite_source=False):
        """graphviz.Digraph.render: save the source, render it (format from `format`, `outfile`'s
        extension or `.format`), optionally open it; returns the rendered file's path."""
        kwargs = dict(view=view, cleanup=cleanup, format=format, renderer=renderer, formatter=formatter,
                      neato_no_op=neato_no_op, quiet=quiet, quiet_view=quiet_view, outfile=outfile,
                      engine=engine, raise_if_result_exists=raise_if_result_exists,
                      overwrite_source=overwrite_source)
        if _has_dot():
            return super().render(filename, directory=directory, **kwargs)
        fmt = format or (os.path.splitext(os.fspath(outfile))[1][1:] if outfile is not None else None) or self.format
        data = _without_dot(self, fmt)
        source = self.save(filename, directory=directory, skip_existing=None)
        out = os.fspath(outfile) if outfile is not None else f"{source}.{fmt}"
        if raise_if_result_exists and os.path.exists(out):
            raise graphviz.FileExistsError(f"output file exists: {out!r}")
        with open(out, "wb") as f:
            f.write(data)
        if cleanup:
            os.remove(source)
        if view or quiet_view:
            self._view(out, format=fmt, quiet=quiet_view)
        return out

    def pipe(self, format=None, renderer=None, formatter=None, neato_no_op=None, quiet=False, *,
             engine=None, encoding=None):
        """graphviz.Digraph.pipe: the rendered bytes (str if `encoding` is given)."""
        if _has_dot():
            return super().pipe(format, renderer, formatter, neato_no_op, quiet, engine=engine, encoding=encoding)
        out = _without_dot(self, format or self.format, themed=False)
        return out.decode(encoding) if encoding else out
