"""Warnings that point at the user's line: the first frame outside microtorch, past the API's wrappers and
guards, however deep inside the package the warning is raised (torch's warnings point there too)."""
import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn_at_user_line(message, category=UserWarning):
    warnings.warn(message, category, stacklevel=_user_level())


def _user_level():
    """warnings.warn's stacklevel for the first frame outside microtorch, seen from the caller's caller."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith((_PACKAGE, "<guard")):
        frame, level = frame.f_back, level + 1
    return level


_WARNED_ONCE = set()


def warn_once(key, message, category=UserWarning):
    """A warning torch gives once in a process (TORCH_WARN_ONCE), at the user's line; key names it."""
    if key not in _WARNED_ONCE:
        _WARNED_ONCE.add(key)
        warnings.warn(message, category, stacklevel=_user_level())
