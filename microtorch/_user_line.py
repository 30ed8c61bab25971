"""Warnings that point at the user's line: the first frame outside microtorch, past the API's wrappers and
guards, however deep inside the package the warning is raised (torch's warnings point there too)."""
import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn_at_user_line(message, category=UserWarning):
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith((_PACKAGE, "<guard")):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
