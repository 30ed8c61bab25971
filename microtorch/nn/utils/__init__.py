"""microtorch.nn.utils: gradient clipping, parameter <-> vector conversion, weight norm, BatchNorm fusion,
padded and packed batches of sequences (`nn.utils.rnn`), parametrizations (`parametrize`, `parametrizations`) and
pruning (`prune`), the deprecated `stateless.functional_call`, and convolution weights put in a memory format."""
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401,E501
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,  # noqa: F401
                     skip_init)
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

# nn2: spectral normalisation
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402,F401

# round 20: padded and packed batches of sequences (torch.nn.utils.rnn)
from . import rnn  # noqa: E402,F401

# round 23: parametrizations (prune, as torch's, loads only when imported: import microtorch.nn.utils.prune)
from . import parametrize  # noqa: E402,F401
from . import parametrizations  # noqa: E402,F401
from . import stateless  # noqa: E402,F401  (torch's pre-2.0 functional_call, deprecated)
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: E402,F401
