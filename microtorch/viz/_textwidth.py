"""How wide a line of graph text is drawn, from Arial's advance widths (Helvetica's and Liberation
Sans's are the same numbers), the font the theme draws graph text in.

Graphviz sizes a node from its own guess of its text's width. Its WebAssembly builds have no fonts
and guess narrower than Arial, and `dot` guesses about 2 % narrow: a long name such as
ScaledDotProductFlashAttentionForCpuBackward0 ran over its box. `text_width` lets the graph ask for
boxes as wide as the browser's text.
"""
import unicodedata

# advance widths of the characters ' ' to '~', in thousandths of an em (regular weight)
_ASCII = (278, 278, 355, 557, 557, 890, 667, 191, 334, 334, 390, 584, 278, 334, 278, 278,
          557, 557, 557, 557, 557, 557, 557, 557, 557, 557, 278, 278, 584, 584, 584, 557,
          1016, 667, 667, 723, 723, 667, 611, 778, 723, 278, 500, 667, 557, 834, 723, 778,
          667, 778, 723, 667, 611, 723, 667, 944, 667, 667, 611, 278, 278, 278, 470, 557,
          334, 557, 557, 500, 557, 557, 278, 557, 557, 223, 223, 500, 223, 834, 557, 557,
          557, 557, 334, 500, 278, 557, 500, 723, 500, 500, 500, 334, 260, 334, 584)
# the other characters viz labels use; anything else counts as a full em (CJK text is one em a
# character; a symbol from a fallback font is at most that)
_OTHER = {"\u00a0": 278, "·": 278, "×": 584, "−": 584, "…": 1000, "—": 1000, "→": 1000, "←": 1000}
BOLD = 1.1        # bold lowercase is up to 10 % wider (611 against 557)


def _char(ch):
    code = ord(ch)
    if 32 <= code < 127:
        return _ASCII[code - 32]
    if unicodedata.combining(ch):
        return 0
    return _OTHER.get(ch, 1000)


def text_width(text, size_pt, bold=False):
    """The width of one line of `text` at `size_pt` points, in points (no kerning: a bound from above)."""
    em = sum(_char(ch) for ch in str(text)) / 1000
    return em * size_pt * (BOLD if bold else 1)
