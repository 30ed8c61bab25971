"""Nested tuples, lists and dicts of leaves ("pytrees"): the structures that transforms take
and return. `flatten` gives the leaves and a spec that `unflatten` rebuilds the structure from."""


class Spec:
    """The structure of a pytree: its container type, keys and children (a leaf has none)."""

    def __init__(self, kind, keys=None, children=()):
        self.kind, self.keys, self.children = kind, keys, children

    @property
    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.kind, self.keys, self.children) == \
            (other.kind, other.keys, other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)) + "}"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind is list:
            return f"[{inner}]"
        return f"({inner}{',' if len(self.children) == 1 else ''})"


LEAF = Spec(None)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, children = [], []
        for x in tree:
            sub, spec = flatten(x)
            leaves += sub
            children.append(spec)
        kind = type(tree) if _is_namedtuple(tree) else (list if isinstance(tree, list) else tuple)
        return leaves, Spec(kind, None, tuple(children))
    if isinstance(tree, dict):
        leaves, children = [], []
        keys = tuple(tree)
        for k in keys:
            sub, spec = flatten(tree[k])
            leaves += sub
            children.append(spec)
        return leaves, Spec(dict, keys, tuple(children))
    return [tree], LEAF


def unflatten(leaves, spec):
    it = iter(leaves)
    out = _build(it, spec)
    return out


def _build(it, spec):
    if spec.kind is None:
        return next(it)
    items = [_build(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.keys, items))
    if spec.kind in (tuple, list):
        return spec.kind(items)
    return spec.kind(*items)  # a namedtuple


def broadcast_prefix(prefix, tree, is_leaf=lambda p: not isinstance(p, (tuple, list, dict))):
    """One value of `prefix` per leaf of `tree`: a leaf of the prefix (e.g. an in_dim of 0 or
    None) applies to the whole subtree under it. Returns None when the structures do not match."""
    if is_leaf(prefix):
        return [prefix] * flatten(tree)[1].num_leaves
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return None
        out = []
        for k in tree:
            sub = broadcast_prefix(prefix[k], tree[k], is_leaf)
            if sub is None:
                return None
            out += sub
        return out
    if not isinstance(tree, (tuple, list)) or isinstance(tree, dict) or len(prefix) != len(tree):
        return None
    out = []
    for p, t in zip(prefix, tree):
        sub = broadcast_prefix(p, t, is_leaf)
        if sub is None:
            return None
        out += sub
    return out
