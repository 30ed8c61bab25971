"""torch.xpu on a machine without Intel GPUs: nothing is available."""


def is_available():
    return False


def device_count():
    return 0
