"""Dropout."""
from .. import functional as F
from .module import Module


class Dropout(Module):
    """In training, zero each element with probability p and scale the rest by 1/(1-p); identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


def _variant(name, fn_name, doc):
    return type(name, (Dropout,), {"forward": lambda self, input: getattr(F, fn_name)(input, self.p, self.training,
                                                                                    self.inplace),
                                   "__doc__": doc, "__module__": __name__})


Dropout1d = _variant("Dropout1d", "dropout1d", "zeroes whole channels of (N, C, L) inputs with probability p")
Dropout2d = _variant("Dropout2d", "dropout2d", "zeroes whole channels of (N, C, H, W) inputs with probability p")
Dropout3d = _variant("Dropout3d", "dropout3d", "zeroes whole channels of (N, C, D, H, W) inputs with probability p")
AlphaDropout = _variant("AlphaDropout", "alpha_dropout", "dropout that keeps SELU's zero mean and unit variance")
FeatureAlphaDropout = _variant("FeatureAlphaDropout", "feature_alpha_dropout", "alpha dropout of whole channels")
