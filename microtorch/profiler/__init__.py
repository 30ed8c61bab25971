"""microtorch.profiler: torch.profiler's interface to the autograd profiler.

    from microtorch.profiler import profile, record_function, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

The recording itself is `autograd/profiler.py`'s; this package adds torch.profiler's
activities, `schedule` (which steps to record) and `tensorboard_trace_handler`.
"""
from ..autograd.profiler import record_function  # noqa: F401
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,  # noqa: F401
                       tensorboard_trace_handler)

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]
