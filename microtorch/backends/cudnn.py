"""torch.backends.cudnn on a machine without cuDNN: its switches exist and keep what is set, so the usual
reproducibility lines (`torch.backends.cudnn.deterministic = True`, `benchmark = False`) run unchanged. They
change nothing here: microtorch's ops give the same results on every run anyway."""
import contextlib
import sys

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Set the switches for a block, then put the old ones back (as torch's; they change nothing here)."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    module = sys.modules[__name__]
    old = {n: getattr(module, n) for n in names}
    for n, v in zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)):
        setattr(module, n, v)
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(module, n, v)
