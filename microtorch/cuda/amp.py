"""torch.cuda.amp: the old spellings of torch.amp's autocast("cuda") and GradScaler("cuda"), with torch's
FutureWarning. Without a GPU both are switched off (see microtorch/amp.py)."""
import warnings

from .. import amp as _amp


def autocast(enabled=True, dtype=None, cache_enabled=True):
    warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                  "args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
    warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                  "args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
