"""A small LaTeX -> MathML translator for the formulas the stepper writes.

The stepper shows the chain rule as a formula (dL/dx = dL/dy * cos(x)). It keeps the LaTeX
(copyable, and what `Step.latex` returns) and shows MathML, which every current browser
draws natively: no MathJax, no network, so the static export replays anywhere. Only the
subset the stepper writes is understood: \\frac, \\sqrt, ^, _, groups, \\left/\\right,
\\mathrm/\\mathit/\\mathbf/\\text/\\operatorname, Greek letters and a few operators.
"""
import functools
import html

_SYMBOLS = {
    "partial": ("mi", "∂"), "cdot": ("mo", "·"), "odot": ("mo", "⊙"), "times": ("mo", "×"),
    "top": ("mi", "⊤"), "leftarrow": ("mo", "←"), "rightarrow": ("mo", "→"), "to": ("mo", "→"),
    "sum": ("mo", "∑"), "ldots": ("mo", "…"), "cdots": ("mo", "⋯"), "infty": ("mi", "∞"),
    "nabla": ("mi", "∇"), "approx": ("mo", "≈"), "neq": ("mo", "≠"), "leq": ("mo", "≤"),
    "geq": ("mo", "≥"), "in": ("mo", "∈"), "mathrel": None, "quad": ("mspace", "1em"),
    ",": ("mspace", "0.17em"), ";": ("mspace", "0.28em"), "!": ("mspace", "-0.17em"),
    " ": ("mspace", "0.25em"), "qquad": ("mspace", "2em"), "mid": ("mo", "∣"),
    "{": ("mo", "{"), "}": ("mo", "}"), "|": ("mo", "‖"), "lVert": ("mo", "‖"), "rVert": ("mo", "‖"),
}
_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "eta": "η", "theta": "θ", "lambda": "λ", "mu": "μ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "phi": "φ", "psi": "ψ", "omega": "ω", "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω",
}
_FUNCS = {"sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "log", "ln", "max", "min", "sign",
          "arcsin", "arccos", "arctan"}
_FONTS = {"mathrm": "normal", "mathit": "italic", "mathbf": "bold", "mathbb": "double-struck",
          "operatorname": "normal", "text": None, "mathsf": "sans-serif"}


class _Parser:
    def __init__(self, src):
        self.src = src
        self.i = 0

    def peek(self):
        self.skip_ws()
        return self.src[self.i] if self.i < len(self.src) else ""

    def skip_ws(self):
        while self.i < len(self.src) and self.src[self.i] in " \t\n":
            self.i += 1

    def command(self):
        # at a backslash
        self.i += 1
        j = self.i
        if j < len(self.src) and not self.src[j].isalpha():
            self.i += 1
            return self.src[j]
        while self.i < len(self.src) and self.src[self.i].isalpha():
            self.i += 1
        return self.src[j:self.i]

    def raw_group(self):
        """The text of a {...} argument, unparsed (for \\text and friends)."""
        self.skip_ws()
        if self.i < len(self.src) and self.src[self.i] == "{":
            depth, j = 0, self.i
            while j < len(self.src):
                if self.src[j] == "{":
                    depth += 1
                elif self.src[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            text = self.src[self.i + 1:j]
            self.i = j + 1
            return text.replace("\\_", "_")
        ch = self.src[self.i:self.i + 1]
        self.i += 1
        return ch

    def group(self):
        """One argument: a {...} group or a single atom."""
        if self.peek() == "{":
            self.i += 1
            body = self.expr(stop="}")
            if self.peek() == "}":
                self.i += 1
            return _row(body)
        atom = self.atom()
        return atom if atom is not None else "<mrow></mrow>"

    def expr(self, stop=""):
        items = []
        while True:
            ch = self.peek()
            if not ch or ch in stop:
                return items
            if ch in "^_":
                base = items.pop() if items else "<mrow></mrow>"
                sup = sub = None
                while self.peek() in ("^", "_") and self.peek():
                    op = self.src[self.i]
                    self.i += 1
                    arg = self.group()
                    if op == "^":
                        sup = arg
                    else:
                        sub = arg
                if sup is not None and sub is not None:
                    items.append(f"<msubsup>{base}{sub}{sup}</msubsup>")
                elif sup is not None:
                    items.append(f"<msup>{base}{sup}</msup>")
                else:
                    items.append(f"<msub>{base}{sub}</msub>")
                continue
            atom = self.atom(stop)
            if atom is None:
                return items
            items.append(atom)

    def atom(self, stop=""):
        ch = self.peek()
        if not ch:
            return None
        if ch == "{":
            self.i += 1
            body = self.expr(stop="}")
            if self.peek() == "}":
                self.i += 1
            return _row(body)
        if ch == "}":      # a stray closing brace: skip it
            self.i += 1
            return ""
        if ch == "\\":
            return self.macro(stop)
        if ch.isdigit() or (ch == "." and self.src[self.i + 1:self.i + 2].isdigit()):
            j = self.i
            while self.i < len(self.src) and (self.src[self.i].isdigit() or self.src[self.i] == "."):
                self.i += 1
            return f"<mn>{self.src[j:self.i]}</mn>"
        self.i += 1
        if ch.isalpha():
            return f"<mi>{html.escape(ch)}</mi>"
        if ch == "-":
            return "<mo>−</mo>"
        if ch == "'":
            return "<mo>′</mo>"
        return f"<mo>{html.escape(ch)}</mo>"

    def macro(self, stop):
        name = self.command()
        if name == "frac":
            num = self.group()
            den = self.group()
            return f"<mfrac>{num}{den}</mfrac>"
        if name == "sqrt":
            return f"<msqrt>{self.group()}</msqrt>"
        if name == "overline":
            return f'<mover>{self.group()}<mo accent="true">¯</mo></mover>'

        if name in ("left", "right"):
            self.skip_ws()
            if self.src[self.i] == "\\":
                d = self.command()
                d = {"{": "{", "}": "}", "|": "‖", "lVert": "‖", "rVert": "‖"}.get(d, d)
            else:
                d = self.src[self.i]
                self.i += 1
            return "" if d == "." else f'<mo stretchy="true">{html.escape(d)}</mo>'
        if name in _FONTS:
            text = self.raw_group()
            if name == "text":
                return f"<mtext>{html.escape(text)}</mtext>"
            if name == "mathbb" and text == "1":
                return '<mn mathvariant="double-struck">𝟙</mn>'
            variant = _FONTS[name]
            return f'<mi mathvariant="{variant}">{html.escape(text)}</mi>'
        if name == "mathrel":
            return _row(self.expr_one())
        if name in _GREEK:
            return f"<mi>{_GREEK[name]}</mi>"
        if name in _FUNCS:
            return f'<mi mathvariant="normal">{name}</mi><mo>&#x2061;</mo>'
        sym = _SYMBOLS.get(name)
        if sym is not None:
            tag, text = sym
            if tag == "mspace":
                return f'<mspace width="{text}"></mspace>'
            return f"<{tag}>{html.escape(text)}</{tag}>"
        return f"<mtext>{html.escape(name)}</mtext>"

    def expr_one(self):
        g = self.group()
        return [g]


def _row(items):
    if len(items) == 1:
        return items[0]
    return "<mrow>" + "".join(items) + "</mrow>"


@functools.lru_cache(maxsize=4096)
def to_mathml(latex, display=True):
    """`<math>` for a LaTeX formula (the subset above); the LaTeX goes in the annotation."""
    body = _Parser(latex).expr()
    mode = ' display="block"' if display else ""
    return (f'<math{mode}><semantics><mrow>{"".join(body)}</mrow>'
            f'<annotation encoding="application/x-tex">{html.escape(latex)}</annotation></semantics></math>')
