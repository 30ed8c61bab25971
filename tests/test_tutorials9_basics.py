"""docs.pytorch.org's autograd, nn and torch.func tutorials (2025 versions), shortened and run twice: with
torch 2.13 and with microtorch as `torch`. Each test is one tutorial's code as a function of the library;
what it prints or returns must be torch's (bit for bit where the computation is exact or short)."""
import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _both(tutorial):
    """The tutorial run with torch, then with microtorch, each seeded alike: (torch's result, ours)."""
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        out.append(tutorial(lib))
    return out


def _arrays(values):
    return [v.detach().numpy() if hasattr(v, "detach") else np.asarray(v) for v in values]


def _same(a, b, **tol):
    for x, y in zip(_arrays(a), _arrays(b), strict=True):
        if tol:
            np.testing.assert_allclose(x, y, **tol)
        else:
            assert np.array_equal(x, y), (x, y)


def _autograd_basics(torch):
    """basics/autogradqs_tutorial: one layer, BCE with logits, and the Jacobian products of inp."""
    x, y = torch.ones(5), torch.zeros(3)
    w, b = torch.randn(5, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    names = (z.grad_fn.name(), loss.grad_fn.name())
    loss.backward()
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    grads = []
    for zero in (False, False, True):
        if zero:
            inp.grad.zero_()
        out.backward(torch.ones_like(out), retain_graph=True)
        grads.append(inp.grad.clone())
    with torch.no_grad():
        no_grad = (torch.matmul(x, w) + b).requires_grad
    return names, no_grad, (torch.matmul(x, w) + b).detach().requires_grad, [loss, w.grad, b.grad] + grads


def test_autogradqs_tutorial():
    theirs, ours = _both(_autograd_basics)
    assert theirs[:3] == ours[:3] == (("AddBackward0", "BinaryCrossEntropyWithLogitsBackward0"), False, False)
    _same(theirs[3][:1] + theirs[3][3:], ours[3][:1] + ours[3][3:])
    # (w.grad and b.grad may differ in a last bit: the backward is torch's formula in its order now, but
    # sigmoid's own float32 values come from numpy's exp, not torch's vector kernel)
    _same(theirs[3][1:3], ours[3][1:3], rtol=1e-6)


def _lenet(torch):
    """blitz/neural_networks_tutorial: LeNet, a random 32x32 input, MSELoss, conv1's bias gradient, an SGD step."""
    from test_torch_random import lenet
    nn = torch.nn
    net = lenet(torch)
    input, target = torch.randn(1, 1, 32, 32), torch.randn(10).view(1, -1)
    loss = nn.MSELoss()(net(input), target)
    chain = [loss.grad_fn, loss.grad_fn.next_functions[0][0]]
    chain.append(chain[1].next_functions[0][0])  # (addmm's first edge is its bias)
    net.zero_grad()
    loss.backward()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    optimizer.step()
    return [n.name() for n in chain], repr(net), [loss, net.conv1.bias.grad, net(input)]


def test_neural_networks_tutorial():
    theirs, ours = _both(_lenet)
    assert theirs[0] == ours[0] == ["MseLossBackward0", "AddmmBackward0", "torch::autograd::AccumulateGrad"]
    assert theirs[1] == ours[1]
    _same(theirs[2], ours[2], rtol=1e-5, atol=1e-7)


def _double_backward(torch):
    """intermediate/custom_function_double_backward_tutorial: Square, Exp, Sinh (intermediates as outputs)
    and Cube with a hand-written CubeBackward, each through gradcheck, gradgradcheck and a second derivative."""
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx, expnegx = torch.exp(x), torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_out_exp * expx
            grad_input -= grad_out_negexp * expnegx
            return grad_input

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    class CubeBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return grad_out * 3 * x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            return grad_out * 3 * x ** 2, grad_out * sav_grad_out * 6 * x

    x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
    results, checks = [], []
    for f in (Square.apply, lambda t: Sinh.apply(t)[0], Cube.apply):
        checks += [torch.autograd.gradcheck(f, x), torch.autograd.gradgradcheck(f, x)]
        g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        results += [g, torch.autograd.grad(g.sum(), x)[0]]
    return checks, results


def test_custom_function_double_backward_tutorial():
    theirs, ours = _both(_double_backward)
    assert theirs[0] == ours[0] == [True] * 6
    _same(theirs[1], ours[1], rtol=1e-15)


def _forward_ad(torch):
    """intermediate/forward_ad_usage: dual tensors through a function, through nn.Linear (parameters swapped
    for duals), through functional_call, a custom Function's jvp, and torch.func.jvp over a parameter dict."""
    fwAD, nn = torch.autograd.forward_ad, torch.nn
    primal, tangent, plain = torch.randn(10, 10), torch.randn(10, 10), torch.randn(10, 10)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual).tangent is tangent
        jvp0 = fwAD.unpack_dual(dual ** 2 + plain ** 2).tangent
    model, input = nn.Linear(5, 5), torch.randn(16, 5)
    params = dict(model.named_parameters())
    tangents = {name: torch.rand_like(p) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        jvp1 = fwAD.unpack_dual(model(input)).tangent
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        jvp2 = fwAD.unpack_dual(torch.func.functional_call(nn.Linear(5, 5), duals, input)).tangent

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            ctx.result = torch.exp(foo)
            return ctx.result

        @staticmethod
        def jvp(ctx, gI):
            return gI * ctx.result

    x = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
    with fwAD.dual_level():
        jvp3 = fwAD.unpack_dual(Fn.apply(fwAD.make_dual(x, torch.randn(10, 10)))).tangent
    ok = torch.autograd.gradcheck(Fn.apply, (x,), check_forward_ad=True, check_backward_ad=False,
                                  check_undefined_grad=False, check_batched_grad=False)
    out, jvp4 = torch.func.jvp(lambda ps: torch.func.functional_call(model, ps, input), (params,), (tangents,))
    return ok, [jvp0, jvp1, jvp2, jvp3, out, jvp4]


def test_forward_ad_usage_tutorial():
    theirs, ours = _both(_forward_ad)
    assert theirs[0] is ours[0] is True
    _same(theirs[1], ours[1], rtol=1e-5, atol=1e-6)


def _per_sample_grads(torch):
    """intermediate/per_sample_grads: a small CNN's gradients, per example, by a loop and by vmap(grad)."""
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 13 * 13, 10),
                          nn.LogSoftmax(dim=1))
    data, targets = torch.randn(4, 1, 28, 28), torch.randint(10, (4,))

    def compute_grad(sample, target):
        loss = F.nll_loss(model(sample.unsqueeze(0)), target.unsqueeze(0))
        return torch.autograd.grad(loss, list(model.parameters()))

    loop = [torch.stack(shards) for shards in zip(*[compute_grad(data[i], targets[i]) for i in range(4)])]
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        out = torch.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.nll_loss(out, target.unsqueeze(0))

    mapped = torch.func.vmap(torch.func.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    return loop, list(mapped.values())


def test_per_sample_grads_tutorial():
    theirs, ours = _both(_per_sample_grads)
    for loop, mapped in (ours, theirs):
        _same(loop, mapped, atol=3e-3, rtol=1e-5)  # (the tutorial's own check)
    _same(theirs[0], ours[0], rtol=1e-5, atol=1e-6)
    _same(theirs[1], ours[1], rtol=1e-5, atol=1e-6)


def _ensembling(torch):
    """intermediate/ensembling: ten MLPs stacked with stack_module_state and run by vmap over a meta model."""
    import copy
    nn = torch.nn
    models = [nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10)) for _ in range(10)]
    data = torch.randn(10, 8, 1, 28, 28)
    loop = torch.stack([m(x) for m, x in zip(models, data)])
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return torch.func.functional_call(base, (params, buffers), (x,))

    same_batch = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data[0])
    return [p.size(0) for p in params.values()], [loop, torch.func.vmap(fmodel)(params, buffers, data), same_batch]


def test_ensembling_tutorial():
    theirs, ours = _both(_ensembling)
    assert theirs[0] == ours[0] == [10] * 4
    _same(ours[1][0], ours[1][1], atol=1e-3, rtol=1e-5)  # (the tutorial's own check)
    _same(theirs[1], ours[1], rtol=1e-5, atol=1e-6)


def _saved_tensors(torch):
    """intermediate/autograd_saved_tensors_hooks_tutorial: what a node saved, and hooks that change it."""
    a, b = torch.randn(5, requires_grad=True), torch.ones(5, requires_grad=True)
    y = a * b
    facts = [y.grad_fn._saved_self is a, y.grad_fn._saved_other is b]
    e = torch.exp(a)
    facts += [e.grad_fn._saved_result.equal(e), e.grad_fn._saved_result is e]
    x = torch.randn(5, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
        y = torch.pow(x, 2)
    y.sum().backward()
    facts.append(x.grad.equal(2 * x))
    storage = []

    def pack(t):
        storage.append(t)
        return len(storage) - 1

    x = torch.randn(5, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda i: storage[i]):
        y = x * x
    y.sum().backward()
    facts.append(x.grad.equal(2 * x))
    model = torch.nn.Linear(4, 3)
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    return facts, [x.grad, model.weight.grad]


def test_saved_tensors_hooks_tutorial():
    theirs, ours = _both(_saved_tensors)
    assert theirs[0] == ours[0] == [True, True, True, False, True, True]
    _same(theirs[1], ours[1])


def _quickstart(torch):
    """basics/quickstart_tutorial (FashionMNIST replaced by random images of its shape): two epochs of SGD."""
    from_lib = __import__(torch.__name__ + ".utils.data", fromlist=["DataLoader"])
    nn = torch.nn
    train = from_lib.TensorDataset(torch.rand(128, 1, 28, 28), torch.randint(0, 10, (128,)))
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))
    loss_fn, optimizer = nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(2):
        model.train()
        for X, y in from_lib.DataLoader(train, batch_size=32, shuffle=True):
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        correct = (model(train.tensors[0]).argmax(1) == train.tensors[1]).type(torch.float).sum().item()
    return correct, losses


def test_quickstart_tutorial():
    theirs, ours = _both(_quickstart)
    assert theirs[0] == ours[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nn_tutorial_from_scratch(dtype):
    """beginner/nn_tutorial ("What is torch.nn really?", MNIST replaced by random arrays): logistic regression
    from scratch, with the hand-written log_softmax and nll, then F.cross_entropy."""
    rng = np.random.default_rng(0)
    x_np, y_np = rng.random((256, 784)).astype(dtype), rng.integers(0, 10, 256)

    def tutorial(torch):
        x_train, y_train = map(torch.tensor, (x_np, y_np))
        weights = (torch.randn(784, 10, dtype=x_train.dtype) / 28).requires_grad_()
        bias = torch.zeros(10, dtype=x_train.dtype, requires_grad=True)

        def model(xb):
            z = xb @ weights + bias
            return z - z.exp().sum(-1).log().unsqueeze(-1)

        def nll(input, target):
            return -input[list(range(target.shape[0])), target].mean()  # (the tutorial indexes with a range)

        losses = []
        for i in range(4):
            xb, yb = x_train[i * 64:(i + 1) * 64], y_train[i * 64:(i + 1) * 64]
            loss = nll(model(xb), yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * 0.5
                bias -= bias.grad * 0.5
                weights.grad.zero_()
                bias.grad.zero_()
            losses.append(loss)
        return losses + [torch.nn.functional.cross_entropy(xb @ weights + bias, yb)]

    theirs, ours = _both(tutorial)
    _same(theirs, ours, rtol=1e-12 if dtype == "float64" else 1e-5)
