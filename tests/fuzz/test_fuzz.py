"""The differential fuzzer's fixed seeds, run by `make test` (the long profile is `make fuzz`).

Each chunk runs seeded programs on torch and microtorch and fails with a minimized reproducer for
the first difference outside the documented table (docs/testing.md, "Known differences").
"""
import pytest

from .check import check_program, check_seed
from .compare import KNOWN, real
from .gen import generate
from .shrink import minimize, reproducer

SEEDS_PER_CHUNK = 40
CHUNKS = 20  # 800 programs, about a minute on this machine

# PENDING: open differences among these seeds, not fixed yet and NOT in the known table (make fuzz
# still counts them). Each seed here is skipped only for that category; any other difference fails.
# Empty: the four that were here (125, 221, 405, 580) are fixed and tested like every other seed,
# and tests/fuzz/test_regressions.py keeps a small program for each class of fix.
PENDING = {}


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fixed_seeds_match_torch(chunk):
    for seed in range(chunk * SEEDS_PER_CHUNK, (chunk + 1) * SEEDS_PER_CHUNK):
        prog, diffs = check_seed(seed)
        bad = [d for d in real(diffs) if d[0] != PENDING.get(seed)]
        if bad:
            category, detail = bad[0]
            small = minimize(prog, category, budget=150)
            pytest.fail(f"seed {seed}: {category}: {detail}\n\n{reproducer(small, category)}")


def test_the_fuzzer_can_fail():
    """A planted difference is caught and minimized: run a program, then corrupt microtorch's side."""
    import torch

    from . import run
    prog = generate(7, torch)
    assert prog.steps
    real_run = run.run_program

    def broken(L, p, grads=True):
        tr = real_run(L, p, grads)
        if L.__name__ == "microtorch" and tr.steps:
            tr.steps[0].values = tr.steps[0].values + 1.0
        return tr
    run.run_program = broken
    try:
        from . import check
        check.run_program = broken
        assert any(c.startswith("value:") for c, _ in check_program(prog))
    finally:
        run.run_program = real_run
        check.run_program = real_run


def test_known_table_is_the_documented_one():
    """Every key the fuzzer accepts is listed in docs/testing.md's table, and nothing else is."""
    import pathlib
    doc = (pathlib.Path(__file__).parents[2] / "docs" / "testing.md").read_text()
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| key | torch 2.13"))
    rows = []
    for line in lines[start + 2:]:  # the known-differences table only, not the table of what is left
        if not line.startswith("|"):
            break
        rows.append(line)
    table = [line.split("|")[1].strip(" `") for line in rows]
    assert sorted(table) == sorted(KNOWN)


def test_rounding_is_accepted_only_where_torch_moves_as_much():
    """known:rounding needs torch itself to move as much when the leaves move by a few ulps: seed 10956's
    cos of 1.6e11 does; the same relative error planted in a well-conditioned value is reported."""
    from . import check, run
    assert ("known:rounding" in {c for c, _ in check_seed(10956)[1]})
    prog = generate(7, __import__("torch"))
    real_run = run.run_program

    def nudged(L, p, grads=True):
        tr = real_run(L, p, grads)
        if L.__name__ == "microtorch" and tr.steps:
            tr.steps[0].values = tr.steps[0].values * (1 + 1e-5) + 1e-5
        return tr
    check.run_program = nudged
    try:
        cats = {c for c, _ in check_program(prog)}
    finally:
        check.run_program = real_run
    assert any(c.startswith("value:") for c in cats) and "known:rounding" not in cats


def _dies_at_seed_5(seeds):
    """a stand-in for the long run's work on a chunk of seeds, whose process dies on seed 5"""
    import collections
    import os
    if 5 in seeds:
        os._exit(1)
    return collections.Counter({"ok": len(seeds)}), {}, 0


def test_a_seed_whose_process_dies_is_the_only_one_counted(monkeypatch):
    """torch itself segfaults on some programs (seed 548791, in register_hook): the long run counts that seed as
    `crash:worker` and still checks every other seed (before, all the seeds after it were counted as crashes)."""
    import collections

    from . import __main__ as main
    monkeypatch.setattr(main, "_work", _dies_at_seed_5)
    results = main._run_chunks([list(range(0, 4)), list(range(4, 8)), list(range(8, 12))], 1)
    counts = collections.Counter()
    for c, _, _ in results:
        counts.update(c)
    assert counts == {"ok": 11, "crash:worker": 1}
    assert [e["crash:worker"][0] for _, e, _ in results if "crash:worker" in e] == [5]


def test_a_pool_that_breaks_while_chunks_are_handed_out_loses_none(monkeypatch):
    """A process can die before every chunk is submitted; then submit() itself raises BrokenProcessPool (seeds
    1,400,000 and on: the long run stopped with a traceback). The chunks not handed out run again."""
    import collections
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from . import __main__ as main
    monkeypatch.setattr(main, "_work", _dies_at_seed_5)
    real_submit, calls = ProcessPoolExecutor.submit, []

    def submit(pool, fn, *args):
        calls.append(args)
        if len(calls) == 3:  # the first pool breaks while its third chunk is handed out
            raise BrokenProcessPool("a child process terminated abruptly")
        return real_submit(pool, fn, *args)
    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    results = main._run_chunks([list(range(i, i + 2)) for i in range(0, 12, 2)], 1)
    counts = collections.Counter()
    for c, _, _ in results:
        counts.update(c)
    assert counts == {"ok": 11, "crash:worker": 1}


def test_values_a_known_difference_changed_are_accepted_only_downstream_of_it():
    """known:nan-sign and known:torch-median-overlap cover the step (a copysign by a NaN whose sign bit differs;
    a median of an expanded tensor) and what is computed from it; the same flip of a number that is not NaN, or a
    difference in a step that does not read it, is reported."""
    import numpy as np

    from .compare import compare
    from .program import Leaf, Program, Step
    from .run import StepRecord, Trace

    def rec(values):
        v = np.asarray(values, dtype=np.float64)
        return StepRecord("float64", v.shape, v, False, True, None, ())

    nan, minus_nan = np.nan, np.copysign(np.nan, -1)
    prog = Program(1, [Leaf("a", np.array([1.0, 2.0]), False)],
                   [Step("v0", "unary2", "L.log({0})", ("a",)), Step("v1", "binary2", "L.copysign({0}, {1})", ("a", "v0")),
                    Step("v2", "unary2", "L.exp({0})", ("v1",)), Step("v3", "unary2", "L.exp({0})", ("a",))])

    def cats(mt_v0, mt_v1, mt_v3):
        tt = Trace([rec([nan, 0.5]), rec([1.0, 2.0]), rec(np.exp([1.0, 2.0])), rec(np.exp([1.0, 2.0]))])
        mt = Trace([rec(mt_v0), rec(mt_v1), rec(np.exp(mt_v1)), rec(mt_v3)])
        return sorted({c for c, _ in compare(prog, tt, mt)})
    assert cats([minus_nan, 0.5], [-1.0, 2.0], np.exp([1.0, 2.0])) == ["known:nan-sign"]
    assert cats([minus_nan, 0.5], [-1.0, -2.0], np.exp([1.0, 2.0])) == ["value:binary2", "value:unary2"]
    assert "value:unary2" in cats([minus_nan, 0.5], [-1.0, 2.0], np.exp([1.0, 2.5]))
    # torch's median of an expanded tensor reads memory it never wrote, so whether seed 1436347 shows it depends
    # on the machine: the entry is checked on traces written here, and the seed only for having nothing real.
    med = Program(1, [Leaf("a", np.array([1.0]), False)],
                  [Step("v0", "expand", "{0}.expand((3,))", ("a",)), Step("v1", "median", "L.median({0}, 0).values", ("v0",)),
                   Step("v2", "unary2", "L.exp({0})", ("v1",)), Step("v3", "median", "L.median({0}, 0).values", ("a",))])
    garbage = 6.9e-310
    tt = Trace([rec([1.0] * 3), rec(garbage), rec(np.exp(garbage)), rec(1.0)])
    assert sorted({c for c, _ in compare(med, tt, Trace([rec([1.0] * 3), rec(1.0), rec(np.e), rec(1.0)]))}) == [
        "known:torch-median-overlap"]
    tt = Trace([rec([1.0] * 3), rec(1.0), rec(np.e), rec(garbage)])  # the same garbage from a median of no expand
    assert "value:median" in {c for c, _ in compare(med, tt, Trace([rec([1.0] * 3), rec(1.0), rec(np.e), rec(1.0)]))}
    from .check import check_seed
    assert not real(check_seed(1436347)[1])


@pytest.mark.parametrize("seed", [2118716, 2392113, 464499])
def test_einsum_results_are_laid_out_as_torch(seed):
    """seeds whose einsum result had another layout than torch's (contiguous() copied in torch and returned it
    here; view() refused in one library only; matmul folded in one only): no real difference now that the result
    has torch's strides (einsum is composed as torch's, ops/einsum.py; tests/test_round14_einsum_median.py compares
    the strides)"""
    assert not real(check_seed(seed)[1])


def test_seed_15072_batch_times_vector_as_torch():
    """make fuzz's seed 15,072: a float64 batch times a vector, folded into mv, whose last bits a `** -2` showed
    (tests/test_fuzz13_findings.py tests mv and bmm themselves)"""
    from _machine import gemv_in_order
    if not gemv_in_order():
        pytest.skip("this CPU's MKL adds a gemv's products in another order")
    assert not real(check_seed(15072)[1])


def test_seed_3827342_sinc_second_order_as_torch():
    """seed 3,827,342: sinc(sinc(2)) ** 2.5, whose second order reads sinc's backward at -3.9e-17 (its nodes are made
    in torch's order now: tests/test_round17_followups.py)"""
    assert not real(check_seed(3827342)[1])


def test_seed_3909961_a_one_input_ops_layout_as_torch():
    """seed 3,909,961: tan of a permuted tensor with a size-1 dim, then a matmul that folds or takes bmm by its
    strides (tests/test_round17_followups.py)"""
    assert not real(check_seed(3909961)[1])


def test_seed_3990154_gelu_in_double_as_torch():
    """seed 3,990,154: std of three equal gelus, which is 1.9e-16 in torch and was 0 here (gelu(1) one bit lower: torch
    multiplies by M_SQRT1_2; tests/test_round18_values.py)"""
    assert not real(check_seed(3990154)[1])


def test_seed_4003209_log_softmax_gradient_in_double_as_torch():
    """seed 4,003,209: log_softmax then a product of 36 terms, whose gradient of 1e15 cancels in log_softmax's
    backward: its float64 kernel now adds in torch's order (tests/test_round18_values.py)"""
    assert not real(check_seed(4003209)[1])


def test_seed_4078807_a_diagonals_power_lays_out_as_torch():
    """seed 4,078,807: pow of a diagonal kept the size-1 dim's stride in torch, so the matmul after it folded into mv
    (tests/test_round18_layouts.py)"""
    assert not real(check_seed(4078807)[1])


def test_seed_4567838_clamp_by_one_tensor_bound_lays_out_as_torch():
    """seed 4,567,838: clamp(x, min=t), x with a size-1 dim of its own stride: torch takes its contiguous fast path
    (the absent max is no operand), so the matmul after it folded into mm (tests/test_round19_teaching_code.py)"""
    assert not real(check_seed(4567838)[1])


def test_seed_4519146_in_place_on_a_slice_of_a_detached_expand():
    """seed 4,519,146: mul_ of one element of a detached expand(): torch writes into the storage
    (tests/test_round19_teaching_code.py)"""
    assert not real(check_seed(4519146)[1])


def test_seed_4083299_a_lost_views_error_before_amins():
    """seed 4,083,299: amin of a split()'s output lost to an in-place change, over an empty dim
    (tests/test_round18_engine.py)"""
    assert not real(check_seed(4083299)[1])


def test_seed_4042267_a_captured_gradient_before_the_tensors_hooks():
    """seed 4,042,267: autograd.grad asks for a tensor made by an in-place op, whose hook doubles its gradient, and
    for a leaf behind it: torch captures the gradient before the hook runs (tests/test_round18_engine.py)"""
    assert not real(check_seed(4042267)[1])
