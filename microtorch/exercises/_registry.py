"""The table of exercises: name -> (notebook, hint, the function that judges an answer)."""
from dataclasses import dataclass


@dataclass
class Entry:
    notebook: int
    hint: str
    func: object
    doc: str


REGISTRY = {}


def exercise(notebook, hint):
    """Register `func` as the check `check.<func name>` of a notebook, with its hint."""
    def register(func):
        name = func.__name__
        if name in REGISTRY:
            raise ValueError(f"two exercises named {name!r}")
        REGISTRY[name] = Entry(notebook, hint, func, (func.__doc__ or "").strip())
        return func
    return register
