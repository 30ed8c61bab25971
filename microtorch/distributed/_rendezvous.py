"""Where init_process_group learns its rank and world size: an init_method URL (env://, tcp://, file://), its
rank= and world_size= arguments, and for env:// the variables torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT).

torch reads them the same way and then opens a store (a TCP server, a file) where the processes meet. With one
process there is nobody to meet, so no store is opened: the values are read and checked, with torch's errors,
and nothing is bound or written."""
import numbers
import os
from urllib.parse import urlparse


def _error(scheme, msg):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {msg}")


def _query(url):
    pairs = [p.split("=", 1) for p in urlparse(url).query.split("&") if p]
    return {p[0]: p[1] if len(p) > 1 else "" for p in pairs}


def _as_int(text, what):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid literal for int() with base 10: {text!r} (init_process_group: {what} must be "
                         f"an integer)") from None


def _with_arguments(url, rank, world_size):
    """torch's first step: rank= and world_size= given as arguments go into the URL's query, which must not
    name them already."""
    if rank == -1 and world_size == -1:
        return _query(url)
    query = _query(url)
    if "rank" in query or "world_size" in query:
        raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) already. "
                             "(init_process_group: give rank and world_size either in the URL or as arguments)")
    if rank != -1:
        query["rank"] = str(rank)
    if world_size != -1:
        query["world_size"] = str(world_size)
    return query


def _env_value(name):
    value = os.environ.get(name)
    if not value:  # (an empty variable counts as unset, as in torch)
        raise _error("env", f"environment variable {name} expected, but not set (launch with torchrun, which "
                            f"sets it, or set {name} yourself; RANK=0 WORLD_SIZE=1 runs one process)")
    return value


def _from_env(query):
    rank = _as_int(query["rank"] if "rank" in query else _env_value("RANK"), "RANK")
    world_size = _as_int(query["world_size"] if "world_size" in query else _env_value("WORLD_SIZE"), "WORLD_SIZE")
    _env_value("MASTER_ADDR")
    _as_int(_env_value("MASTER_PORT"), "MASTER_PORT")
    return rank, world_size


def _from_query(scheme, url, query):
    parsed = urlparse(url)
    if scheme == "tcp" and parsed.port is None:
        raise _error("tcp", "port number missing (write the URL as tcp://host:port)")
    if scheme == "file" and not parsed.path:
        raise _error("file", "path missing (write the URL as file:///path/to/a/shared/file)")
    if "rank" not in query:
        raise _error(scheme, "rank parameter missing (pass rank= to init_process_group)")
    if "world_size" not in query:
        raise _error(scheme, "world size parameter missing (pass world_size= to init_process_group)")
    return _as_int(query["rank"], "rank"), _as_int(query["world_size"], "world_size")


def rendezvous(url, rank=-1, world_size=-1):
    """(rank, world_size) that init_method `url` and the arguments give, checked as torch checks them."""
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    scheme = urlparse(url).scheme
    query = _with_arguments(url, rank, world_size)
    if scheme == "env":
        return _from_env(query)
    if scheme in ("tcp", "file"):
        return _from_query(scheme, url, query)
    raise RuntimeError(f"No rendezvous handler for {scheme}:// (init_process_group: init_method is one of "
                       "'env://', 'tcp://host:port' or 'file:///path')")
