"""`python -m tests.fuzz`: the long profile, one seed, or the minimizer (see docs/testing.md).

    python -m tests.fuzz                      # 30,000 programs on 2 processes, counts by category
    python -m tests.fuzz -n 2000 --start 10**6
    python -m tests.fuzz --seed 1234          # one program: its source, its differences
    python -m tests.fuzz --seed 1234 --shrink # ... and a minimized reproducer per category
"""
import argparse
import collections
import multiprocessing
import sys
import time

from .check import check_seed
from .compare import real
from .shrink import minimize, reproducer


def _work(seeds):
    counts, examples, bad = collections.Counter(), {}, 0
    for s in seeds:
        _, diffs = check_seed(s)
        bad += bool(real(diffs))
        for cat, detail in diffs:
            counts[cat] += 1
            examples.setdefault(cat, (s, detail))
    return counts, examples, bad


def _run_chunks(chunks, jobs):
    """Chunks of seeds on `jobs` processes; a seed whose process dies is reported, not lost, and not blamed on
    the others: a process that dies breaks the whole pool, so every seed not finished then runs again, the
    first of them alone (a seed whose process dies when alone is the one reported)."""
    results, todo = _pool(chunks, jobs)
    while todo:
        first, died = _pool([todo[:1]], 1)
        if died:
            first = [(collections.Counter({"crash:worker": 1}),
                      {"crash:worker": (todo[0], "the process running it died")}, 1)]
        done, todo = _pool([[s] for s in todo[1:]], jobs) if todo[1:] else ([], [])
        results += first + done
    return results


def _pool(chunks, jobs):
    """(results of the chunks that finished, the seeds of those whose process pool broke)"""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    results, broken = [], []
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        submitted = []
        for i, c in enumerate(chunks):
            try:
                submitted.append((c, pool.submit(_work, c)))
            except BrokenProcessPool:  # (a process died while the chunks were being handed out)
                broken += [s for rest in chunks[i:] for s in rest]
                break
        for c, f in submitted:
            try:
                results.append(f.result())
            except BrokenProcessPool:
                broken = c + broken
    return results, broken


def long_run(n, start, jobs):
    t0 = time.time()
    seeds = list(range(start, start + n))
    results = _run_chunks([seeds[i:i + 100] for i in range(0, n, 100)], jobs)
    counts, examples, bad = collections.Counter(), {}, 0
    for c, e, b in results:
        counts.update(c)
        bad += b
        for k, v in e.items():
            examples.setdefault(k, v)
    dt = time.time() - t0
    print(f"{n} programs (seeds {start}..{start + n - 1}) in {dt:.0f} s on {jobs} processes; "
          f"{bad} with a difference outside the known table")
    for cat, k in sorted(counts.items(), key=lambda kv: (kv[0].startswith("known:"), -kv[1])):
        s, detail = examples[cat]
        print(f"  {k:6d}  {cat:28s} e.g. seed {s}: {detail[:110]}")
    return bad


def one_seed(seed, shrink):
    prog, diffs = check_seed(seed)
    print(reproducer(prog))
    for cat, detail in diffs:
        print(f"{cat}: {detail}")
    if shrink:
        for cat in dict.fromkeys(c for c, _ in real(diffs)):
            print("\n" + reproducer(minimize(prog, cat), cat))
    return bool(real(diffs))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz")
    ap.add_argument("-n", type=int, default=30000, help="programs to run (default 30000)")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--seed", type=int, help="run one seed and print it")
    ap.add_argument("--shrink", action="store_true", help="with --seed: minimize each difference")
    a = ap.parse_args(argv)
    if a.seed is not None:
        return int(one_seed(a.seed, a.shrink))
    return int(long_run(a.n, a.start, a.jobs) > 0)


if __name__ == "__main__":
    sys.exit(main())
