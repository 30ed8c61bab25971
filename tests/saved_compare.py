"""What a node saves and the graph it is in, seen from outside, for torch and microtorch side by side: the
grad_fn's name, the tensors its pack hooks see (in order), its `_saved_<name>` attributes before and after
backward, whether a second backward through it raises torch's "backward through the graph a second time"; and
the whole graph's node names and edges (graph_of), and the leaves under a node (leaves_of).

    observe(torch, f) == observe(microtorch, f)   # f(lib) -> a tensor (or a tuple: its first is used)

assert_saves_as_torch(f) compares the saved tensors; assert_saves_as_torch(f, skip=STRIDES) also every value
torch's node shows (dims, sizes, kernel sizes, flags), with its Python type.
"""
import warnings

# Attributes torch's nodes show that microtorch's do not keep (strides and sizes only C++ kernels read,
# and a few arguments kept as given): compared only where a test names them.
NOT_COMPARED = ("_sym_strides", "_sym_sizes", "_sym_argsize", "_sym_numel", "_saved_dim", "_saved_dims",
                "_saved_keepdim", "_saved_sparse_grad", "_saved_self_sym_sizes", "_saved_accumulate",
                "_saved_alpha", "_saved_source_dim", "_saved_padding_idx", "_saved_scale_grad_by_freq",
                "_saved_sparse", "_saved_ceil_mode", "_saved_dilation", "_saved_kernel_size", "_saved_padding",
                "_saved_stride", "_saved_count_include_pad", "_saved_divisor_override", "_saved_output_size")
# Strides are a C++ kernel's business (numpy counts them in bytes): the one thing the strict comparison skips.
STRIDES = ("_sym_strides",)


def describe(v, typed=False):
    """A value torch and microtorch can both produce: tensors by shape, dtype and values; with typed, a number
    or string with its type (1, 1.0 and True are then told apart)."""
    if v is None:
        return None
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1], v.detach().reshape(-1).tolist())
    if isinstance(v, (list, tuple)):
        return tuple(describe(x, typed) for x in v)
    return (type(v).__name__, v) if typed else v


def saved_names(node, skip=NOT_COMPARED):
    return sorted(n for n in dir(node) if n.startswith("_saved_") and not any(s in n for s in skip)
                  and n not in ("_saved_names", "_saved_values"))


def observe(T, f, names=None, skip=NOT_COMPARED):
    """(name, packs, saved values, second backward raises, saved attributes readable after backward). With a
    skip other than NOT_COMPARED, values are described with their types."""
    typed = skip is not NOT_COMPARED
    packs = []

    def pack(t):
        packs.append(describe(t))
        return t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = f(T)
    y = y[0] if isinstance(y, tuple) else y
    node = y.grad_fn
    names = saved_names(node, skip) if names is None else names
    before = {n: describe(getattr(node, n), typed) for n in names}
    y.sum().backward()
    try:
        y.sum().backward()
        twice = "ok"
    except RuntimeError as e:
        twice = "raises" if "second time" in str(e) else "other: " + str(e)
    after = {}
    for n in names:
        try:
            after[n] = describe(getattr(node, n), typed)
        except RuntimeError as e:
            after[n] = "raises" if "freed" in str(e) else "other: " + str(e)
    return node.name(), packs, before, twice, after


def assert_saves_as_torch(f, skip=NOT_COMPARED):
    """f(lib) -> tensor: microtorch's node saves, packs, frees and names what torch's does (and, with
    skip=STRIDES, shows every value torch's node shows)."""
    import torch

    import microtorch
    theirs = observe(torch, f, skip=skip)
    mine = observe(microtorch, f, names=list(theirs[2]), skip=skip)
    assert mine == theirs


def nodes_of(y):
    """The nodes reachable from y.grad_fn, breadth first, each once."""
    nodes, queue = [], [y.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is not None and not any(node is n for n in nodes):
            nodes.append(node)
            queue.extend(n for n, _ in node.next_functions)
    return nodes


def graph_of(y):
    """Each node reachable from y.grad_fn, breadth first: its name and, per edge, (the node it leads to, input nr)."""
    order, seen, queue = [], {}, [y.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = len(order)
        order.append(node)
        queue.extend(n for n, _ in node.next_functions)
    return [(n.name().replace("torch::autograd::", ""),
             tuple(None if m is None else (seen[id(m)], k) for m, k in n.next_functions)) for n in order]


def leaves_of(node, seen=None):
    """The leaf tensors under node, in the order of a depth-first walk of next_functions."""
    seen = [] if seen is None else seen
    for nxt, _ in node.next_functions if node is not None else ():
        if nxt is None:
            continue
        if hasattr(nxt, "variable"):
            if not any(nxt.variable is t for t in seen):
                seen.append(nxt.variable)
        else:
            leaves_of(nxt, seen)
    return seen


def gradient_graphs(f, leaves, L):
    """f(L, *leaves) -> y: the gradients of (y * y).sum() with create_graph=True, each as its graph (graph_of) and its
    nodes' saved values (typed); the second-order gradients of a weighted sum of them; and the gradients' values."""
    y = f(L, *leaves)
    gs = L.autograd.grad((y * y).sum(), leaves, create_graph=True)
    graphs = [(graph_of(g), [{k: describe(getattr(n, k), True) for k in saved_names(n, STRIDES)} for n in nodes_of(g)])
              for g in gs]
    weights = [L.linspace(-1, 1, g.numel(), dtype=g.dtype).reshape(g.shape) for g in gs]
    second = L.autograd.grad(sum((w * g).sum() for w, g in zip(weights, gs)), leaves, allow_unused=True)
    return graphs, [None if s is None else s.detach().numpy() for s in second], [g.detach().numpy() for g in gs]
