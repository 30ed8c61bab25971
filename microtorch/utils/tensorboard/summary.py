"""The Summary protocol buffers a SummaryWriter logs, one builder per kind of data (torch.utils.tensorboard.summary):
scalar, histogram, image, video, audio, text, tensor, hparams, PR curve, custom-scalar layout and mesh.

Each builder turns microtorch tensors and numpy arrays into the same protos as torch's does for the same values, so
that TensorBoard shows a microtorch run as it shows a torch one.
"""
import json
import logging
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._tensor import Tensor, as_tensor
from ...ops.elementwise import view_as_real
from ._convert_np import make_np
from ._utils import _prepare_video, convert_to_HWC

__all__ = ["half_to_int", "int_to_half", "hparams", "scalar", "histogram_raw", "histogram", "make_histogram", "image",
           "image_boxes", "draw_boxes", "make_image", "video", "make_video", "audio", "custom_scalars", "text",
           "tensor_proto", "pr_curve_raw", "pr_curve", "compute_curve", "mesh"]

logger = logging.getLogger(__name__)


def _summary(tag, **value):
    """A Summary holding one value (its tag, and its `simple_value`, `tensor`, `histo`, `image`... and metadata)."""
    return Summary(value=[Summary.Value(tag=tag, **value)])


def _plugin_metadata(plugin_name, content=None):
    """The metadata that tells TensorBoard which plugin (dashboard) shows a value, with that plugin's data."""
    data = SummaryMetadata.PluginData(plugin_name=plugin_name)
    if content is not None:
        data.content = content
    return SummaryMetadata(plugin_data=data)


def _shape_proto(shape):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=size) for size in shape])


# ---- scalars and tensors -----------------------------------------------------------------------------------------

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A scalar: a one-element tensor, array or number. Old style in `simple_value` (a float32); new_style in a
    float (or, with double_precision, double) tensor read by the scalars plugin."""
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions)." + " " * 13 +
                             f"Was given size: {value.size} and {value.ndim} dimensions.")
    number = float(value)  # a Python float: a double
    if not new_style:
        return _summary(name, simple_value=number)
    if double_precision:
        proto = TensorProto(double_val=[number], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[number], dtype="DT_FLOAT")
    return _summary(name, tensor=proto, metadata=_plugin_metadata("scalars"))


def half_to_int(f):
    """The bits of f as a float32, read as an int32 (how torch fills a TensorProto's half_val)."""
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    """The inverse of half_to_int."""
    return struct.unpack("f", struct.pack("i", i))[0]


def _half_values(t):
    return [half_to_int(x) for x in t.flatten().tolist()]


def _complex_values(t):
    return view_as_real(t).flatten().tolist()  # (real, imaginary) pairs


def _plain_values(t):
    return t.flatten().tolist()


# dtype name -> (TensorProto dtype, the proto's field for the values, how to list them), as in torch's table
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", _half_values),
    "float32": ("DT_FLOAT", "float_val", _plain_values),
    "float64": ("DT_DOUBLE", "double_val", _plain_values),
    "int8": ("DT_INT8", "int_val", _plain_values),
    "uint8": ("DT_UINT8", "uint32_val", _plain_values),
    "int16": ("DT_INT16", "int_val", _plain_values),
    "int32": ("DT_INT32", "int_val", _plain_values),
    "int64": ("DT_INT64", "int64_val", _plain_values),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_values),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_values),
    "bool": ("DT_BOOL", "bool_val", _plain_values),
}


def tensor_proto(tag, tensor):
    """A whole tensor, for the tensor plugin (SummaryWriter.add_tensor)."""
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype.name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values = _TENSOR_FIELDS[tensor.dtype.name]
    proto = TensorProto(dtype=dtype, tensor_shape=_shape_proto(tensor.shape), **{field: values(tensor)})
    return _summary(tag, metadata=_plugin_metadata("tensor"), tensor=proto)


# ---- histograms --------------------------------------------------------------------------------------------------

def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002 (torch's names)
    """A histogram from its statistics and buckets, as given (each bucket by its upper limit)."""
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares, bucket_limit=bucket_limits,
                           bucket=bucket_counts)
    return _summary(name, histo=histo)


def histogram(name, values, bins, max_bins=None):
    """A histogram of the values (any shape), with numpy's `bins` (edges, a count or a rule's name)."""
    histo = make_histogram(make_np(values).astype(float), bins, max_bins)
    return _summary(name, histo=histo)


def _merge_buckets(counts, limits, max_bins):
    """At most about max_bins buckets: each run of len(counts) // max_bins neighbours summed into one."""
    group = len(counts) // max_bins
    if len(counts) % group:
        counts = np.pad(counts, pad_width=[[0, group - len(counts) % group]], mode="constant", constant_values=0)
    counts = counts.reshape(-1, group).sum(axis=-1)
    merged = np.empty((counts.size + 1,), limits.dtype)
    merged[:-1] = limits[:-1:group]
    merged[-1] = limits[-1]
    return counts, merged


def make_histogram(values, bins, max_bins=None):
    """A HistogramProto of float values, trimmed to the buckets between the first and the last non-empty one."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_buckets(counts, limits, max_bins)
    occupied = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(occupied, [0, occupied[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    # TensorBoard reads only upper limits: an empty bucket before the first keeps that one's lower limit
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


# ---- images, video and audio -------------------------------------------------------------------------------------

def _scale_for(image):
    """What the values are multiplied by to reach [0, 255]: uint8 images are there already, others are in [0, 1]."""
    values = image if isinstance(image, np.ndarray) else image.numpy()
    return 1 if values.dtype == np.uint8 else 255


def _to_uint8(image):
    scale = _scale_for(image)
    return (image.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (or a batch, tiled in a grid) as PNG; float values in [0, 1] become 0..255 (clipped)."""
    hwc = convert_to_HWC(make_np(tensor), dataformats)
    return _summary(tag, image=make_image(_to_uint8(hwc), rescale=rescale))


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """An image with boxes (rows of xmin, ymin, xmax, ymax) drawn on it in red, each with its label if given."""
    hwc = convert_to_HWC(make_np(tensor_image), dataformats)
    boxes = make_np(tensor_boxes)
    scaled = hwc.astype(np.float32) * _scale_for(hwc)
    encoded = make_image(scaled.clip(0, 255).astype(np.uint8), rescale=rescale, rois=boxes, labels=labels)
    return _summary(tag, image=encoded)


def draw_boxes(disp_image, boxes, labels=None):
    """Draw each box (a row of xmin, ymin, xmax, ymax) on a PIL image, in red."""
    for i in range(boxes.shape[0]):
        disp_image = _draw_single_box(disp_image, boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3],
                                      display_str=None if labels is None else labels[i], color="Red")
    return disp_image


def _draw_single_box(image, xmin, ymin, xmax, ymax, display_str, color="black", color_text="black", thickness=2):
    from PIL import ImageDraw, ImageFont

    font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    corners = [(xmin, ymin), (xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)]
    draw.line(corners, width=thickness, fill=color)
    if display_str:  # the label on a filled band along the box's bottom edge
        left, top, right, bottom = font.getbbox(display_str)
        text_width, text_height = right - left, bottom - top
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(xmin, ymax - text_height - 2 * margin), (xmin + text_width, ymax)], fill=color)
        draw.text((xmin + margin, ymax - text_height - margin), display_str, fill=color_text, font=font)
    return image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A (H, W, C) uint8 array as a Summary.Image: PNG bytes (resized by `rescale`, boxes drawn if given)."""
    import io

    from PIL import Image

    height, width, channels = tensor.shape
    picture = Image.fromarray(tensor)
    if rois is not None:
        picture = draw_boxes(picture, rois, labels=labels)
    picture = picture.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as png:
        picture.save(png, format="PNG")
        encoded = png.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=encoded)


def video(tag, tensor, fps=4):
    """A batch of videos (N, T, C, H, W) as one animated GIF (needs moviepy)."""
    frames = _prepare_video(make_np(tensor))
    return _summary(tag, image=make_video(_to_uint8(frames), fps))


def make_video(tensor, fps):
    """(T, H, W, C) uint8 frames as a GIF Summary.Image; None (after saying why) without moviepy."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor as mpy
    except ImportError:
        print("moviepy is installed, but can't import moviepy.editor.",
              "Some packages could be missing [imageio, requests]")
        return None
    import tempfile

    _, height, width, channels = tensor.shape
    clip = mpy.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as gif:
        _write_gif(clip, gif.name)
        gif.seek(0)
        encoded = gif.read()
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=encoded)


def _write_gif(clip, filename):
    """clip.write_gif quietly, whichever moviepy: newer ones take a logger, older ones progress_bar, or neither."""
    for quiet in ({"logger": None}, {"progress_bar": False}, {}):
        try:
            return clip.write_gif(filename, verbose=False, **quiet)
        except TypeError:
            if not quiet:
                raise
    return None


def audio(tag, tensor, sample_rate=44100):
    """A mono sound (values in [-1, 1], clipped with a warning) as a 16-bit WAV."""
    import io
    import wave

    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (samples * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as wav_bytes:
        with wave.open(wav_bytes, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(samples.data)
        encoded = wav_bytes.getvalue()
    sound = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=samples.shape[-1],
                          encoded_audio_string=encoded, content_type="audio/wav")
    return _summary(tag, audio=sound)


# ---- text, custom-scalar layouts, PR curves ----------------------------------------------------------------------

def text(tag, text):
    """A string, shown (as markdown) by the text plugin under `<tag>/text_summary`."""
    metadata = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")], tensor_shape=_shape_proto([1]))
    return _summary(tag + "/text_summary", metadata=metadata, tensor=proto)


def _chart(title, kind_and_tags):
    """One chart of a custom-scalar layout: ["Margin", [value, lower, upper]] or ["Multiline", [tags...]]."""
    kind, tags = kind_and_tags[0], kind_and_tags[1]
    if kind == "Margin":
        if len(tags) != 3:
            raise AssertionError("len(tags) != 3")
        series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
        return layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series]))
    return layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags))


def custom_scalars(layout):
    """The custom-scalars dashboard's layout: {category: {chart title: [kind, tags]}}."""
    categories = [layout_pb2.Category(title=category, chart=[_chart(title, spec) for title, spec in charts.items()])
                  for category, charts in layout.items()]
    serialized = layout_pb2.Layout(category=categories).SerializeToString()
    proto = TensorProto(dtype="DT_STRING", string_val=[serialized], tensor_shape=TensorShapeProto())
    return _summary("custom_scalars__config__", tensor=proto, metadata=_plugin_metadata("custom_scalars"))


def _pr_curve_summary(tag, data, num_thresholds):
    """The 6 rows (TP, FP, TN, FN, precision, recall) over the thresholds, for the PR-curve plugin."""
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_shape_proto([data.shape[0], data.shape[1]]))
    return _summary(tag, metadata=_plugin_metadata("pr_curves", content), tensor=proto)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A PR curve from counts and ratios already computed per threshold."""
    num_thresholds = min(num_thresholds, 127)  # more breaks the plugin's protobuf (torch's limit)
    return _pr_curve_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A PR curve of binary labels against predicted probabilities (numpy arrays)."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_curve_summary(tag, data, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """TP, FP, TN, FN, precision and recall at num_thresholds thresholds evenly spread over [0, 1]."""
    smallest_count = 1e-7  # keeps precision and recall finite where nothing is predicted positive
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_per_bucket, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=positive * weights)
    fp_per_bucket, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=(1.0 - positive) * weights)
    # counted at a threshold: every prediction at or above it
    tp = np.cumsum(tp_per_bucket[::-1])[::-1]
    fp = np.cumsum(fp_per_bucket[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(smallest_count, tp + fp)
    recall = tp / np.maximum(smallest_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


# ---- meshes ------------------------------------------------------------------------------------------------------

def _get_json_config(config_dict):
    """The three.js configuration as JSON ("{}" without one)."""
    return "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)


def _get_tensor_summary(name, display_name, description, tensor, content_type, components, json_config):
    """One part of a mesh (vertices, faces or colors: a (B, N, 3) tensor) as a Summary.Value for the mesh plugin."""
    from tensorboard.plugins.mesh import metadata

    tensor = as_tensor(tensor)
    mesh_metadata = metadata.create_summary_metadata(name, display_name, content_type, components, tensor.shape,
                                                     description, json_config=json_config)
    proto = TensorProto(dtype="DT_FLOAT", float_val=tensor.reshape(-1).tolist(),
                        tensor_shape=_shape_proto([tensor.shape[0], tensor.shape[1], tensor.shape[2]]))
    return Summary.Value(tag=metadata.get_instance_name(name, content_type), tensor=proto, metadata=mesh_metadata)


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A mesh or point cloud: its vertices, and its faces and vertex colors if given, one value each."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    json_config = _get_json_config(config_dict)
    parts = [(part, kind) for part, kind in ((vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
                                             (colors, MeshPluginData.COLOR)) if part is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    return Summary(value=[_get_tensor_summary(tag, display_name, description, part, kind, components, json_config)
                          for part, kind in parts])


# ---- hyperparameters ---------------------------------------------------------------------------------------------

def _check_discrete_domains(hparam_dict, hparam_domain_discrete):
    """Each listed domain names a logged hyperparameter and holds values of its type."""
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for name, domain in hparam_domain_discrete.items():
        if (name not in hparam_dict or not isinstance(domain, list)
                or not all(isinstance(d, type(hparam_dict[name])) for d in domain)):
            raise TypeError(f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                            f"hparam_dict[{name}].")


def _hparam_info(name, value, domains, start_info):
    """Record value in the session's start info; its HParamInfo (type and discrete domain) for the experiment."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, HParamInfo

    # a bool is an int here, as in torch: True is logged as the number 1.0
    if isinstance(value, (int, float, str)):
        field = "string_value" if isinstance(value, str) else "number_value"
        setattr(start_info.hparams[name], field, value)
        domain = None
        if name in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[name]])
        kind = "DATA_TYPE_STRING" if isinstance(value, str) else "DATA_TYPE_FLOAT64"
        return HParamInfo(name=name, type=DataType.Value(kind), domain_discrete=domain)
    if isinstance(value, Tensor):
        start_info.hparams[name].number_value = make_np(value)[0]
        return HParamInfo(name=name, type=DataType.Value("DATA_TYPE_FLOAT64"))
    raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")


def _hparams_summary(tag, **plugin_data):
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    content = HParamsPluginData(version=PLUGIN_DATA_VERSION, **plugin_data).SerializeToString()
    return _summary(tag, metadata=_plugin_metadata(PLUGIN_NAME, content))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of the hparams plugin: the experiment (which hyperparameters and metrics), the session's
    start (the hyperparameters' values) and its end (success). Values: int, float, str, bool or a tensor."""
    from tensorboard.plugins.hparams.api_pb2 import Experiment, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.metadata import EXPERIMENT_TAG, SESSION_END_INFO_TAG, SESSION_START_INFO_TAG
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, dict):
            message = f"parameter: {name} should be a dictionary, nothing logged."
            logger.warning(message)
            raise TypeError(message)
    domains = hparam_domain_discrete or {}
    _check_discrete_domains(hparam_dict, domains)
    start_info = SessionStartInfo()
    infos = [_hparam_info(name, value, domains, start_info) for name, value in hparam_dict.items() if value is not None]
    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    end_info = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary(EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(SESSION_START_INFO_TAG, session_start_info=start_info),
            _hparams_summary(SESSION_END_INFO_TAG, session_end_info=end_info))
