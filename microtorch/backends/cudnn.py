"""torch.backends.cudnn on a machine without cuDNN: its switches exist and keep what is set, so the usual
reproducibility lines (`torch.backends.cudnn.deterministic = True`, `benchmark = False`) run unchanged. They
change nothing here: microtorch's ops give the same results on every run anyway."""

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
