"""torch.backends.mps: Apple's GPU backend, never available here."""


def is_available():
    return False


def is_built():
    return False
