"""Run every benchmark in this folder, one after the other (`make bench`).

    .venv/bin/python -m benchmarks.run [name ...]

Each `benchmarks/<name>_bench.py` runs in its own process, so that one benchmark's memory or
thread settings do not affect the next; results are printed as each finishes.
"""
import pathlib
import subprocess
import sys


def main(argv=None):
    names = argv if argv is not None else sys.argv[1:]
    here = pathlib.Path(__file__).parent
    found = sorted(p.stem for p in here.glob("*_bench.py"))
    todo = [n if n.endswith("_bench") else n + "_bench" for n in names] or found
    failed = []
    for name in todo:
        if name not in found:
            sys.exit(f"no benchmark benchmarks/{name}.py (have: {', '.join(found)})")
        print(f"\n==== benchmarks.{name} ====", flush=True)
        if subprocess.run([sys.executable, "-m", f"benchmarks.{name}"], cwd=here.parent).returncode:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
