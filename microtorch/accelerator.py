"""torch.accelerator: the current accelerator, if any (none: microtorch runs on the CPU)."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
