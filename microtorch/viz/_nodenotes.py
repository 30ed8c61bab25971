"""One sentence on what an unusual backward node is, from its name: a node a double backward records
(SoftplusBackwardBackward0), torch's Scalar overload of an arithmetic op (MulBackward1), or a node
that raises when a backward reaches it (NotImplemented, Error). The stepper's panel shows it under
the node's name, and the graph's tooltip ends with it."""
import re

from ._i18n import tr

_DOUBLE = re.compile(r"^(\w+?Backward(?:Data)?)Backward\d+$")
_SCALAR = {"AddBackward1": "+", "SubBackward1": "-", "MulBackward1": "*", "DivBackward1": "/"}


def note(name):
    """The sentence for a node's shown name (F.shown_name), or "" for an ordinary node."""
    m = _DOUBLE.match(name)
    if m:
        return tr("the derivative of {formula}, the formula that computed a first gradient: create_graph=True "
                  "recorded it, so that gradient can be differentiated again").format(formula=m.group(1))
    if name in _SCALAR:
        return tr("torch's Scalar overload (t {op} a number, written inside a backward formula): one edge, for "
                  "the tensor; the number is a constant").format(op=_SCALAR[name])
    if name == "NotImplemented":
        return tr("torch has no derivative formula here: a backward that reaches this node raises")
    if name == "Error":
        return tr("a backward that reaches this node raises: torch refuses a derivative here (a "
                  "once_differentiable backward differentiated again, for example)")
    return ""
