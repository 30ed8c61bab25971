from .activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,  # noqa: F401
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6, RReLU, SELU, SiLU, Sigmoid, Softmax,
                         Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .parameter_containers import ParameterDict, ParameterList  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,  # noqa: F401
                   HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
                   MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss)
from .module import Module  # noqa: F401
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,  # noqa: F401
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
                      ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .parallel import DataParallel  # noqa: F401
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm  # noqa: F401
from .pooling import AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d  # noqa: F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding  # noqa: F401

__all__ = [name for name, value in list(globals().items()) if isinstance(value, type) and not name.startswith("_")]

# nn2: attention and the Transformer family
from .attention import MultiheadAttention  # noqa: E402,F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,  # noqa: E402,F401
                          TransformerEncoderLayer)
__all__ += ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
            "TransformerEncoderLayer"]
from .normalization_more import (BatchNorm3d, CrossMapLRN2d, GroupNorm, InstanceNorm1d, InstanceNorm2d,  # noqa: E402,F401
                                 InstanceNorm3d, LocalResponseNorm, RMSNorm)
__all__ += ["BatchNorm3d", "CrossMapLRN2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LocalResponseNorm", "RMSNorm"]
from .loss_more import CTCLoss, MultiLabelMarginLoss, MultiMarginLoss, NLLLoss2d  # noqa: E402,F401
__all__ += ["CTCLoss", "MultiLabelMarginLoss", "MultiMarginLoss", "NLLLoss2d"]
from .bag import Bilinear, EmbeddingBag  # noqa: E402,F401
__all__ += ["Bilinear", "EmbeddingBag"]
from .container_legacy import Container  # noqa: E402,F401
__all__ += ["Container"]
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402,F401
__all__ += ["AdaptiveLogSoftmaxWithLoss"]
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: E402,F401
__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
# nn1: the spatial layers of issue 13 (3-d and transposed conv, pooling, unpooling, upsampling, shuffles)
from .conv_more import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401,E402
from .pooling_more import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,  # noqa: F401,E402
                           AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
                           LPPool1d, LPPool2d, LPPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .upsampling import (ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d,  # noqa: F401,E402
                         UpsamplingNearest2d)
__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool3d",
            "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool3d", "MaxUnpool1d",
            "MaxUnpool2d", "MaxUnpool3d", "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "Upsample",
            "UpsamplingBilinear2d", "UpsamplingNearest2d"]
# lazy modules (their input size read from the first input)
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d,  # noqa: F401,E402
                   LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
