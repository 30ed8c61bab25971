"""SummaryWriter (torch.utils.tensorboard.writer): what a training loop logs for TensorBoard, written as event
files in a log directory. Each add_* method builds a Summary (summary.py) and hands it to a FileWriter, which queues
events and writes them from a background thread (tensorboard's EventFileWriter).

add_scalars writes each of its curves to a sub-directory of its own (a "run" for TensorBoard); add_hparams writes a
run per call; add_embedding writes the projector's files beside the event files.
"""
import os
import time

from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ._convert_np import make_np
from ._embedding import get_embedding_info, make_mat, make_sprite, make_tsv, write_pbtxt
from ._utils import figure_to_image
from .summary import (audio, custom_scalars, histogram, histogram_raw, hparams, image, image_boxes, mesh, pr_curve,
                      pr_curve_raw, scalar, tensor_proto, text, video)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protos to one event file in log_dir (created with the FileWriter). Events wait in a queue until
    max_queue of them wait, flush_secs seconds have passed, or flush() is called."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)  # (a Path too)

    def get_logdir(self):
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Queue an Event proto, stamped with walltime (now by default) and step (made an int: protobuf may refuse
        a numpy integer)."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Queue a Summary proto, in an Event."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """Queue a (GraphDef, RunMetadata) pair: the graph, then its step stats tagged "step1"."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        run_metadata = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=run_metadata), None, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        """Queue a GraphDef proto."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self):
        """Write the queued events and close the file."""
        self.event_writer.close()

    def reopen(self):
        """Meant to open a new event file after close(); tensorboard 2's EventFileWriter has no reopen, so this
        raises AttributeError, as torch's does."""
        self.event_writer.reopen()


def _histogram_edges():
    """TensorBoard's default buckets (bins="tensorflow"): +-1e-12 growing by 10% up to 1e20 each way, and 0."""
    edges, edge = [], 1e-12
    while edge < 1e20:
        edges.append(edge)
        edge *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def _default_logdir(comment):
    """runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>: a new directory per run, as torch names them."""
    import socket
    from datetime import datetime

    return os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


def _encode(tag):
    """An embedding's tag as one directory name: '%', '/' and '\\' written as %xx."""
    for char in ("%", "/", "\\"):
        tag = tag.replace(char, f"%{ord(char):02x}")
    return tag


def _graph_unavailable(model):
    """add_graph's error: torch traces the model with torch.jit, which microtorch does not have."""
    return RuntimeError(
        f"add_graph traces the model with torch.jit.trace, which microtorch does not have, so no graph is written "
        f"for {type(model).__name__}: draw the model's graph with microtorch.viz.explore(model, input_to_model) "
        f"(or microtorch.viz.draw(model(input_to_model), module=model)) instead")


class SummaryWriter:
    """Logs for TensorBoard: `writer.add_scalar("loss", loss, step)` and the other add_* methods write event files in
    log_dir (by default runs/<date>_<host><comment>). Use it in a `with` block, or call close() at the end.

    purge_step: when a crashed run restarts at step T in the same log_dir, TensorBoard hides its events at steps
    T and later. max_queue, flush_secs: when queued events are written (whichever comes first). filename_suffix: the
    event files' names end with it."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        self.log_dir = log_dir if log_dir else _default_logdir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None  # made by _get_file_writer, again after close()
        self._get_file_writer()
        self.default_bins = _histogram_edges()

    def _get_file_writer(self):
        """The FileWriter of log_dir, opened again (in a new event file) if the writer was closed."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # a restart marker: TensorBoard drops what was logged from here on
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory the event files are written to."""
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False, double_precision=False):
        """One point of the curve `tag`: scalar_value (a number, or a one-element tensor or array) at global_step.
        new_style stores it as a tensor (faster to load in TensorBoard), double_precision as a float64 one."""
        self._add(scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                  global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves in one chart `main_tag`: each {tag: value} goes to its own run, the sub-directory
        <log_dir>/<main_tag with '/' as '_'>_<tag> (TensorBoard draws the runs of one tag together)."""
        walltime = time.time() if walltime is None else walltime  # one time for all the curves' points
        logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            run_dir = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if self.all_writers is None:
                raise AssertionError("self.all_writers is None")
            if run_dir not in self.all_writers:
                self.all_writers[run_dir] = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[run_dir].add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """A whole tensor's values, shape and dtype (for the tensor plugin)."""
        self._add(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of values (any shape). bins: "tensorflow" (TensorBoard's default buckets, growing
        by 10% away from 0) or anything numpy.histogram takes ("auto", "fd", a count, edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None):
        """A histogram already counted: its statistics, and each bucket's upper limit and count."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image, (3, H, W) by default; dataformats names the axes otherwise ("HWC", "HW", "CHW" with 1
        channel...). Floats are taken in [0, 1], uint8 in [0, 255]. Needs pillow."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, (N, 3, H, W) by default (or "NHWC"...), shown as one grid of 8 a row."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None, rescale=1,
                             dataformats="CHW", labels=None):
        """An image with boxes drawn on it: box_tensor is (N, 4), rows of xmin, ymin, xmax, ymax; labels (one
        per box, else ignored) are written on them."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        summary = image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats, labels=labels)
        self._add(summary, global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) as an image; close=True closes the figures."""
        dataformats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=dataformats)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Videos (N, T, C, H, W) as one GIF, the N videos in a grid (needs moviepy)."""
        self._add(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """A mono sound, (1, L) with values in [-1, 1]."""
        self._add(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (TensorBoard renders it as markdown)."""
        self._add(text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """One trial for the HPARAMS tab: its hyperparameters ({name: bool, str, int, float or None}) and metrics
        ({tag: value}, also logged as scalars), in a run of its own, <log_dir>/<run_name> (by default the time).
        hparam_domain_discrete: {name: [every value it can take]}."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, session_start, session_end = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as run:
            for summary in (experiment, session_start, session_end):
                run.file_writer.add_summary(summary, global_step)
            for tag, value in metric_dict.items():
                run.add_scalar(tag, value, global_step)

    def add_onnx_graph(self, prototxt):
        """The graph of an ONNX model file (needs the onnx package)."""
        from ._onnx_graph import load_onnx_graph
        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """torch traces the model with torch.jit to log its graph; microtorch has no tracer, so this raises the
        RuntimeError torch gives for a model it cannot trace, naming microtorch.viz.explore, which draws it."""
        self._get_file_writer()  # (torch opens the event file before tracing, as after a close())
        _ = model.training  # torch puts the model in eval mode first: without .training it fails there
        error = _graph_unavailable(model)
        print(error)  # torch prints the tracer's error, then this line, before raising it
        print("Error occurs, No graph saved")
        raise error

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points for the PROJECTOR tab: mat is (N, D), one point a row; metadata their N labels (or rows of
        columns named by metadata_header); label_img (N, C, H, W) their thumbnails. The files go to
        <log_dir>/<global_step, 5 digits>/<tag>/, listed in <log_dir>/projector_config.pbtxt."""
        mat = make_np(mat)
        global_step = 0 if global_step is None else global_step
        subdir = f"{str(global_step).zfill(5)}/{_encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if not tf.io.gfile.exists(save_path):
            tf.io.gfile.makedirs(save_path)
        elif tf.io.gfile.isdir(save_path):
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        make_mat(mat, save_path)
        self._add_to_projector_config(get_embedding_info(metadata, label_img, subdir, global_step, tag))

    def _add_to_projector_config(self, embedding_info):
        """Rewrite the whole projector_config.pbtxt with one more embedding (a file may not be appendable)."""
        from google.protobuf import text_format

        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([embedding_info])
        write_pbtxt(self._get_file_writer().get_logdir(), text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """A precision-recall curve: labels are the true classes (0/1 or bools), predictions the probabilities of
        class 1, over num_thresholds thresholds (at most 127)."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._add(pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127, weights=None,
                         walltime=None):
        """A precision-recall curve already computed: the counts and ratios at each threshold."""
        summary = pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                               false_negative_counts, precision, recall, num_thresholds, weights)
        self._add(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """A custom chart drawing the scalar curves `tags` together."""
        self._add(custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """A custom chart of a curve between two others: tags are [value, lower, upper]."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._add(custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout):
        """The CUSTOM SCALARS tab's layout, {category: {chart title: ["Multiline", tags] or ["Margin", [value,
        lower, upper]]}}, for tags logged with add_scalar. Once per writer, before or after training."""
        self._add(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None, global_step=None, walltime=None):
        """A 3D mesh or point cloud: vertices (B, N, 3), and colors (B, N, 3) and faces (B, F, 3) if given;
        config_dict configures three.js (camera, lights...)."""
        self._add(mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def flush(self):
        """Write every queued event (of log_dir's file and of add_scalars's runs) to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Write the queued events and close every event file (a second close does nothing). Adding to the
        writer afterwards opens a new event file."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
