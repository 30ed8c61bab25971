"""convert_conv2d_weight_memory_format and its 3-d form: a model's convolution weights laid out in a memory format
(channels-last), as torch's, so that its convolutions give channels-last outputs."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    """The weights of module's convolutions of these kinds (and of its children's) laid out in memory_format."""
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone().contiguous(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """module, its Conv2d and ConvTranspose2d weights in memory_format (torch.channels_last, say)."""
    from ..modules.conv import Conv2d
    from ..modules.conv_more import ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """module, its Conv3d and ConvTranspose3d weights in memory_format (torch.channels_last_3d, say)."""
    from ..modules.conv_more import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
