"""The error comparison the findings tests share: torch's exception type, and torch's text inside microtorch's
message (microtorch may add a hint after it, and names itself where torch names torch)."""
import microtorch
import torch as real_torch

LIBS = (real_torch, microtorch)


def error_of(fn):
    """(exception type name, message) of fn(), microtorch's name read as torch's; (None, None) if it returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, str(e).replace("microtorch", "torch")
    return None, None


def same_error(make):
    """make(lib) raises in torch, and raises the same type with torch's text in microtorch."""
    (want_type, want), (got_type, got) = (error_of(lambda lib=lib: make(lib)) for lib in LIBS)
    assert want_type is not None and got_type == want_type, (want, got)
    assert want in got, (want, got)
