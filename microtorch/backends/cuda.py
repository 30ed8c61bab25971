"""torch.backends.cuda on a machine without GPUs: the matmul switches exist (TF32, reduced-precision
reductions) and keep what is set; there is no GPU product for them to change."""


class _MatmulSwitches:
    """torch.backends.cuda.matmul: allow_tf32 and the reduced-precision reduction flags, as torch's defaults."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulSwitches()


def is_built():
    return False
