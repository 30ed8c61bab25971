"""microtorch.utils.tensorboard writes what torch.utils.tensorboard writes: every test makes the same calls with
torch's SummaryWriter (torch tensors) and microtorch's (microtorch tensors of the same values) into two log
directories, then compares the event files record by record (the Event protos, wall times aside: the Summary values,
steps, plugin metadata, PNG bytes...), the directories add_scalars and add_hparams create, and the projector's files
add_embedding writes. Also: the import fails as torch's does without tensorboard, and add_graph (torch.jit tracing)
raises torch's exception type for a model it cannot trace, naming microtorch.viz."""
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader  # noqa: E402
from tensorboard.compat.proto import event_pb2  # noqa: E402
from torch.utils import tensorboard as torch_tb  # noqa: E402

import microtorch  # noqa: E402
from microtorch.utils import tensorboard as micro_tb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = (("torch", torch, torch_tb.SummaryWriter), ("microtorch", microtorch, micro_tb.SummaryWriter))
EVENT_FILE = re.compile(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()) + r"\.\d+\.(\d+)(.*)$")


# ---- reading what was written ------------------------------------------------------------------------------------

def _events(path):
    """The Event protos of one event file, in order, with the wall times cleared (they are the clock's)."""
    events = []
    for record in RawEventFileLoader(str(path)).Load():
        event = event_pb2.Event.FromString(record)
        event.ClearField("wall_time")
        events.append(event)
    return events


def read_logdir(logdir):
    """{directory relative to logdir: [(file name suffix, [events])]}, the event files of each directory in the
    order the writer opened them (their names' counter), and {relative path: bytes} of every other file."""
    runs, files = {}, {}
    for path in sorted(Path(logdir).rglob("*")):
        if path.is_dir():
            continue
        relative = path.relative_to(logdir)
        match = EVENT_FILE.match(path.name)
        if match is None:
            files[relative.as_posix()] = path.read_bytes()
            continue
        runs.setdefault(relative.parent.as_posix(), []).append((int(match.group(1)), match.group(2), path))
    events = {run: [(suffix, _events(path)) for _, suffix, path in sorted(found)] for run, found in runs.items()}
    return events, files


def logged(tmp_path, log, **writer_kwargs):
    """log(writer, lib) with torch's SummaryWriter and lib=torch, then with microtorch's and lib=microtorch, each
    into a log directory of its own: [(events, files) of torch's, (events, files) of microtorch's]."""
    out = []
    for name, lib, writer_class in LIBRARIES:
        logdir = tmp_path / name
        with writer_class(str(logdir), **writer_kwargs) as writer:
            log(writer, lib)
        out.append(read_logdir(logdir))
    return out


def assert_same_logs(tmp_path, log, **writer_kwargs):
    (theirs, their_files), (ours, our_files) = logged(tmp_path, log, **writer_kwargs)
    assert sorted(ours) == sorted(theirs), "not the same runs (directories of event files)"
    for run in theirs:
        assert [suffix for suffix, _ in ours[run]] == [suffix for suffix, _ in theirs[run]], run
        for (_, their_events), (_, our_events) in zip(theirs[run], ours[run]):
            assert len(our_events) == len(their_events), run
            for theirs_event, ours_event in zip(their_events, our_events):
                assert ours_event == theirs_event, f"{run}:\ntorch:\n{theirs_event}\nmicrotorch:\n{ours_event}"
    assert sorted(our_files) == sorted(their_files)
    for name, data in their_files.items():
        assert our_files[name] == data, name
    return theirs, their_files


def both_raise(log, tmp_path):
    """The exceptions log(writer, lib) raises with torch's writer and with microtorch's (type and message)."""
    raised = []
    for name, lib, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / name)) as writer:
            with pytest.raises(Exception) as info:
                log(writer, lib)
        raised.append((type(info.value), str(info.value)))
    return raised


def test_the_comparison_can_fail(tmp_path):
    def log(writer, lib):
        writer.add_scalar("loss", 1.0 if lib is torch else 2.0, 0)
    with pytest.raises(AssertionError):
        assert_same_logs(tmp_path, log)


# ---- scalars -----------------------------------------------------------------------------------------------------

def test_add_scalar_takes_numbers_arrays_and_tensors(tmp_path):
    def log(writer, lib):
        writer.add_scalar("loss", 0.25)
        writer.add_scalar("loss", 3, global_step=1)
        writer.add_scalar("loss", np.float32(0.1), global_step=np.int64(2))
        writer.add_scalar("loss", np.array([[1e-3]]), 3)
        writer.add_scalar("acc", lib.tensor(0.875), 4)
        writer.add_scalar("acc", lib.tensor([2.0], requires_grad=True) * 3, 5)   # a tensor with a graph
        writer.add_scalar("acc", lib.tensor(7, dtype=lib.int64), 6)
        writer.add_scalar("new", lib.tensor(1 / 3, dtype=lib.float64), 7, new_style=True)
        writer.add_scalar("new", 1 / 3, 8, new_style=True, double_precision=True)
        writer.add_scalar("training loss", 2.5 / 1000, 9)
    theirs, _ = assert_same_logs(tmp_path, log)
    assert len(theirs["."][0][1]) == 11


def test_add_scalar_walltime_is_written(tmp_path):
    stamps = []
    for name, lib, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / name)) as writer:
            writer.add_scalar("x", 1.0, 0, walltime=1234.5)
            writer.add_scalars("y", {"a": 1.0}, 0, walltime=99.25)
        events = [event_pb2.Event.FromString(r) for p in sorted((tmp_path / name).rglob("events*"))
                  for r in RawEventFileLoader(str(p)).Load()]
        stamps.append(sorted(e.wall_time for e in events if e.HasField("summary")))
    assert stamps[1] == stamps[0] == [99.25, 1234.5]


def test_add_scalar_refuses_what_torch_refuses(tmp_path):
    for value in (lambda lib: lib.tensor([1.0, 2.0]), lambda lib: [1.0], lambda lib: "high"):
        theirs, ours = both_raise(lambda writer, lib: writer.add_scalar("x", value(lib)), tmp_path)
        assert ours == theirs


def test_add_scalars_writes_a_run_per_curve(tmp_path):
    def log(writer, lib):
        for step in range(3):
            writer.add_scalars("run_14h", {"xsinx": step * np.sin(step / 5), "xcosx": lib.tensor(step * 0.5),
                                           "tanx": np.tan(step / 5)}, step)
        writer.add_scalars("loss/train", {"a/b": 1.0}, 7)
        writer.add_scalar("plain", 1.0, 0)
    theirs, _ = assert_same_logs(tmp_path, log, filename_suffix=".sfx")
    # (a '/' in a curve's tag makes a sub-directory, in torch too)
    assert sorted(theirs) == [".", "loss_train_a/b", "run_14h_tanx", "run_14h_xcosx", "run_14h_xsinx"]


# ---- histograms --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bins", ["tensorflow", "auto", "fd", "doane", "sqrt", "sturges", 10, [-1.0, 0.0, 0.5, 3.0]])
def test_add_histogram_bins(tmp_path, rng, bins):
    values = rng.standard_normal(1000).astype(np.float32)

    def log(writer, lib):
        writer.add_histogram("weights", lib.tensor(values), 0, bins=bins)
        writer.add_histogram("shifted", lib.tensor(values.reshape(10, 100) + 3, requires_grad=True), 1, bins=bins)
        writer.add_histogram("numpy", values.astype(np.float64) * 1e-3, 2, bins=bins)
        writer.add_histogram("ints", lib.tensor((values * 10).astype(np.int64)), 3, bins=bins)
    assert_same_logs(tmp_path, log)


def test_add_histogram_max_bins_and_single_values(tmp_path, rng):
    values = rng.uniform(-5, 5, 500)

    def log(writer, lib):
        writer.add_histogram("merged", lib.tensor(values), 0, max_bins=7)
        writer.add_histogram("merged", lib.tensor(values), 1, bins=100, max_bins=30)
        writer.add_histogram("constant", lib.ones(5), 2)
        writer.add_histogram("zero", lib.zeros(3), 3)
        writer.add_histogram("number", 2.5, 4)
    assert_same_logs(tmp_path, log)


def test_add_histogram_refuses_what_torch_refuses(tmp_path):
    theirs, ours = both_raise(lambda writer, lib: writer.add_histogram("e", lib.zeros(0), 0), tmp_path)
    assert ours == theirs == (ValueError, "The input has no element.")


def test_add_histogram_raw(tmp_path):
    data = np.repeat(np.arange(50) + 0.001, np.arange(50))
    counts, limits = np.histogram(data, bins=np.arange(52))

    def log(writer, lib):
        writer.add_histogram_raw("raw", min=data.min(), max=data.max(), num=len(data), sum=data.sum(),
                                 sum_squares=data.dot(data), bucket_limits=limits[1:].tolist(),
                                 bucket_counts=counts.tolist(), global_step=0)
    assert_same_logs(tmp_path, log)
    theirs, ours = both_raise(lambda writer, lib: writer.add_histogram_raw("r", 0, 1, 1, 1, 1, [1, 2], [1]), tmp_path)
    assert ours == theirs


# ---- images and figures ------------------------------------------------------------------------------------------

def test_add_image_dataformats(tmp_path, rng):
    chw = rng.uniform(-0.2, 1.2, (3, 12, 10)).astype(np.float32)   # out of [0, 1]: clipped

    def log(writer, lib):
        writer.add_image("chw", lib.tensor(chw), 0)
        writer.add_image("grad", lib.tensor(chw, requires_grad=True) * 0.5, 0)
        writer.add_image("hwc", lib.tensor(chw.transpose(1, 2, 0)), 1, dataformats="HWC")
        writer.add_image("hw", lib.tensor(chw[0]), 2, dataformats="HW")
        writer.add_image("wh", chw[0], 2, dataformats="WH")
        writer.add_image("grey", lib.tensor(chw[:1]), 3)
        writer.add_image("rgba", lib.tensor(np.concatenate([chw, chw[:1]])), 4)
        writer.add_image("uint8", lib.tensor((chw.clip(0, 1) * 255).astype(np.uint8)), 5)
        writer.add_image("float64", chw.astype(np.float64), 6)
    assert_same_logs(tmp_path, log)


def test_add_images_batches(tmp_path, rng):
    nchw = rng.uniform(0, 1, (10, 3, 6, 5)).astype(np.float32)

    def log(writer, lib):
        writer.add_images("nchw", lib.tensor(nchw), 0)
        writer.add_images("nhwc", lib.tensor(nchw.transpose(0, 2, 3, 1)), 1, dataformats="NHWC")
        writer.add_images("grey", lib.tensor(nchw[:4, :1]), 2)
        writer.add_images("uint8", (nchw * 255).astype(np.uint8), 3)
        writer.add_image("grid", lib.tensor(nchw[:3]), 4, dataformats="NCHW")
    assert_same_logs(tmp_path, log)


@pytest.mark.parametrize("call", [
    lambda w, lib: w.add_image("x", lib.zeros(3, 4), 0),
    lambda w, lib: w.add_image("x", lib.zeros(3, 4, 4), 0, dataformats="CCH"),
    lambda w, lib: w.add_images("x", lib.zeros(2, 2, 4, 4), 0),
    lambda w, lib: w.add_image("x", [[0.0]], 0),
], ids=["too few axes", "a letter twice", "two channels", "a list"])
def test_add_image_refuses_what_torch_refuses(tmp_path, call):
    theirs, ours = both_raise(call, tmp_path)
    assert ours == theirs


def test_add_figure(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    figures = []

    def figure(i):
        fig = plt.figure(figsize=(2, 1.5), dpi=50)
        plt.plot([0, 1, 2], [0, i, 4 - i])
        plt.title(f"figure {i}")
        figures.append(fig)
        return fig

    def log(writer, lib):
        writer.add_figure("one", figure(1), global_step=0)
        writer.add_figure("many", [figure(2), figure(3)], global_step=1)
        kept = figure(4)
        writer.add_figure("kept", kept, global_step=2, close=False)
        plt.close(kept)
    assert_same_logs(tmp_path, log)
    assert not any(plt.fignum_exists(f.number) for f in figures)


def test_add_image_with_boxes(tmp_path, rng):
    pytest.importorskip("PIL")
    img = rng.uniform(0, 1, (3, 40, 50)).astype(np.float32)
    boxes = np.array([[2, 3, 20, 30], [10, 5, 45, 35]], dtype=np.float32)

    def log(writer, lib):
        writer.add_image_with_boxes("boxes", lib.tensor(img), lib.tensor(boxes), 0)
        writer.add_image_with_boxes("labelled", lib.tensor(img), lib.tensor(boxes), 1, labels=["cat", "dog"])
        writer.add_image_with_boxes("ignored", lib.tensor(img), lib.tensor(boxes[:1]), 2, labels=["a", "b"])
        writer.add_image_with_boxes("hwc", img.transpose(1, 2, 0), boxes, 3, rescale=2, dataformats="HWC")
    assert_same_logs(tmp_path, log)


# ---- text, hparams, PR curves, custom scalars, tensors, audio, video, meshes ------------------------------------

def test_add_text(tmp_path):
    def log(writer, lib):
        writer.add_text("lstm", "This is an lstm", 0)
        writer.add_text("notes", "**markdown** and ünïcödé, 中文", 10)
        writer.add_text("empty", "")
    assert_same_logs(tmp_path, log)


def test_add_hparams(tmp_path):
    def log(writer, lib):
        writer.add_hparams({"lr": 0.1, "bsize": 16, "optim": "adam", "nesterov": True, "none": None,
                            "wd": lib.tensor([1e-4])},
                           {"hparam/accuracy": 0.9, "hparam/loss": lib.tensor(0.25)}, run_name="trial1")
        writer.add_hparams({"lr": 0.01, "optim": "sgd"}, {"hparam/accuracy": 0.7},
                           hparam_domain_discrete={"lr": [0.1, 0.01], "optim": ["adam", "sgd"]},
                           run_name="trial2", global_step=3)
        writer.add_hparams({"lr": 0.5}, {"m": 1.0}, run_name="nested/run")
    theirs, _ = assert_same_logs(tmp_path, log)
    assert {"trial1", "trial2", "nested/run"} <= set(theirs)


def test_add_hparams_default_run_name_is_the_time(tmp_path):
    for name, _, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / name)) as writer:
            writer.add_hparams({"lr": 0.1}, {"m": 1.0})
        runs = [p.name for p in (tmp_path / name).iterdir() if p.is_dir()]
        assert len(runs) == 1 and re.fullmatch(r"\d+\.\d+", runs[0]), (name, runs)


@pytest.mark.parametrize("call", [
    lambda w, lib: w.add_hparams([("lr", 0.1)], {"m": 1.0}),
    lambda w, lib: w.add_hparams({"lr": 0.1}, {"m": 1.0}, hparam_domain_discrete={"lr": [1, 2]}),
    lambda w, lib: w.add_hparams({"lr": 0.1}, {"m": 1.0}, hparam_domain_discrete={"x": [1.0]}),
    lambda w, lib: w.add_hparams({"lr": 0.1}, {"m": 1.0}, hparam_domain_discrete=[1]),
    lambda w, lib: w.add_hparams({"lr": [0.1]}, {"m": 1.0}),
], ids=["not a dict", "domain of another type", "domain of no hparam", "domains not a dict", "a list value"])
def test_add_hparams_refuses_what_torch_refuses(tmp_path, call):
    theirs, ours = both_raise(call, tmp_path)
    assert ours == theirs


def test_add_pr_curve(tmp_path, rng):
    labels = rng.integers(0, 2, 100)
    probs = rng.uniform(0, 1, 100).astype(np.float32)
    weights = rng.uniform(0, 2, 100)

    def log(writer, lib):
        writer.add_pr_curve("pr", lib.tensor(labels), lib.tensor(probs), 0)
        writer.add_pr_curve("bool labels", lib.tensor(labels) == 1, lib.tensor(probs, requires_grad=True) * 1, 1)
        writer.add_pr_curve("few", labels, probs, 2, num_thresholds=10)
        writer.add_pr_curve("clamped", labels, probs, 3, num_thresholds=500)
        writer.add_pr_curve("weighted", labels, probs, 4, weights=weights)
    assert_same_logs(tmp_path, log)


def test_add_pr_curve_raw(tmp_path, rng):
    rows = rng.uniform(0, 10, (6, 8))

    def log(writer, lib):
        writer.add_pr_curve_raw("raw", *rows, global_step=0, num_thresholds=8)
        writer.add_pr_curve_raw("raw", *[lib.tensor(r) for r in rows], global_step=1, num_thresholds=300)
    assert_same_logs(tmp_path, log)


def test_add_custom_scalars(tmp_path):
    layout = {"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                      "nasdaq": ["Margin", ["nasdaq/aaa", "nasdaq/bbb", "nasdaq/ccc"]]}}

    def log(writer, lib):
        writer.add_custom_scalars(layout)
        writer.add_custom_scalars_multilinechart(["twse/0050", "twse/2330"])
        writer.add_custom_scalars_marginchart(["a", "b", "c"], category="cat", title="t")
    assert_same_logs(tmp_path, log)
    theirs, ours = both_raise(lambda w, lib: w.add_custom_scalars_marginchart(["a", "b"]), tmp_path)
    assert ours == theirs
    theirs, ours = both_raise(lambda w, lib: w.add_custom_scalars({"c": {"m": ["Margin", ["a"]]}}), tmp_path)
    assert ours == theirs


def test_add_tensor(tmp_path, rng):
    values = rng.standard_normal((2, 3))

    def log(writer, lib):
        writer.add_tensor("f32", lib.tensor(values, dtype=lib.float32), 0)
        writer.add_tensor("f64", lib.tensor(values, dtype=lib.float64, requires_grad=True), 1)
        writer.add_tensor("f16", lib.tensor(values, dtype=lib.float16), 2)
        for dtype in (lib.int8, lib.uint8, lib.int16, lib.int32, lib.int64, lib.bool):
            writer.add_tensor(str(dtype).split(".")[1], lib.tensor([[1, 0, 3]]).to(dtype), 3)
        writer.add_tensor("c64", lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex64), 4)
        writer.add_tensor("c128", lib.tensor([1 + 2j], dtype=lib.complex128), 5)
    assert_same_logs(tmp_path, log)


def test_add_audio(tmp_path, rng, capsys):
    sound = rng.uniform(-1, 1, (1, 200)).astype(np.float32)

    def log(writer, lib):
        writer.add_audio("sound", lib.tensor(sound), 0, sample_rate=8000)
        writer.add_audio("loud", lib.tensor(sound * 3), 1)
    assert_same_logs(tmp_path, log)
    assert capsys.readouterr().out.count("warning: audio amplitude out of range, auto clipped.") == 2


def test_add_video_without_moviepy(tmp_path, capsys):
    try:
        import moviepy  # noqa: F401
        pytest.skip("moviepy is installed: its GIF bytes are not compared")
    except ImportError:
        pass

    def log(writer, lib):
        writer.add_video("video", lib.rand(3, 2, 3, 4, 4), 0)
    assert_same_logs(tmp_path, log)
    assert capsys.readouterr().out == "add_video needs package moviepy\n" * 2


def test_add_mesh(tmp_path):
    vertices = [[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]]
    colors = [[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]]
    faces = [[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]]

    def log(writer, lib):
        writer.add_mesh("mesh", vertices=lib.tensor(vertices, dtype=lib.float32), colors=lib.tensor(colors),
                        faces=lib.tensor(faces, dtype=lib.int32), global_step=0)
        writer.add_mesh("points", vertices=lib.tensor(vertices, dtype=lib.float32, requires_grad=True),
                        config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}}, global_step=1)
    assert_same_logs(tmp_path, log)


# ---- embeddings --------------------------------------------------------------------------------------------------

def test_add_embedding_files(tmp_path, rng, capsys):
    pytest.importorskip("PIL")
    features = rng.standard_normal((10, 5)).astype(np.float32)
    images = rng.uniform(0, 1, (10, 1, 4, 6)).astype(np.float32)   # not square: width and height apart
    labels = [f"class{i % 3}" for i in range(10)]

    def log(writer, lib):
        writer.add_embedding(lib.tensor(features, requires_grad=True), metadata=labels,
                             label_img=lib.tensor(images))
        writer.add_embedding(lib.tensor(features * 2), metadata=lib.tensor(np.arange(10)),
                             label_img=lib.tensor(images).repeat(1, 3, 1, 1), global_step=3, tag="a/b%c\\d")
        writer.add_embedding(features, metadata=[[i, i * i] for i in range(10)], metadata_header=["n", "n²"],
                             global_step=4, tag="columns")
        writer.add_embedding(features.astype(np.float64), global_step=4, tag="columns")   # the same directory
    _, files = assert_same_logs(tmp_path, log)
    assert {"projector_config.pbtxt", "00000/default/tensors.tsv", "00000/default/metadata.tsv",
            "00000/default/sprite.png", "00003/a%2fb%25c%5cd/sprite.png", "00004/columns/metadata.tsv"} <= set(files)
    assert files["projector_config.pbtxt"].count(b"embeddings {") == 4
    assert capsys.readouterr().out.count("warning: Embedding dir exists") == 2


@pytest.mark.parametrize("call", [
    lambda w, lib: w.add_embedding(lib.zeros(3, 2), metadata=["a", "b"]),
    lambda w, lib: w.add_embedding(lib.zeros(3, 2), label_img=lib.zeros(2, 1, 4, 4)),
    lambda w, lib: w.add_embedding(lib.zeros(3, 2, 1)),
    lambda w, lib: w.add_embedding(lib.zeros(2, 2), metadata=[[1, 2], [3, 4]], metadata_header=["a"]),
    lambda w, lib: w.add_embedding([[1.0]]),
    lambda w, lib: w.add_embedding(lib.zeros(2, 2), label_img=np.zeros((2, 1, 4, 4))),
], ids=["labels", "images", "3-d", "header", "a list", "numpy images"])
def test_add_embedding_refuses_what_torch_refuses(tmp_path, call):
    theirs, ours = both_raise(call, tmp_path)
    assert ours == theirs


def test_add_embedding_onto_a_file_is_refused(tmp_path):
    raised = []
    for name, lib, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / name)) as writer:
            (tmp_path / name / "00000").mkdir()
            (tmp_path / name / "00000" / "default").write_text("")
            with pytest.raises(NotADirectoryError) as info:
                writer.add_embedding(lib.zeros(2, 2))
        raised.append(str(info.value).replace(name, "<dir>"))
    assert raised[1] == raised[0]


# ---- the writer itself: log_dir, purge_step, suffixes, flush and close -------------------------------------------

def test_default_log_dir_is_runs_date_host_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dirs = []
    for _, _, writer_class in LIBRARIES:
        for kwargs in ({}, {"comment": "LR_0.1_BATCH_16"}, {"log_dir": "", "comment": "_x"}):
            writer = writer_class(**kwargs)
            writer.close()
            dirs.append(re.sub(r"[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d", "<date>", writer.get_logdir()))
    assert dirs[3:] == dirs[:3]
    assert dirs[1] == os.path.join("runs", f"<date>_{socket.gethostname()}LR_0.1_BATCH_16")
    assert all(Path(d).is_dir() for d in {p.parent for p in Path("runs").glob("*/events*")})


def test_log_dir_comment_and_get_logdir(tmp_path):
    got = []
    for name, _, writer_class in LIBRARIES:
        with writer_class(tmp_path / name, comment="ignored") as writer:   # a Path, kept as given
            got.append((type(writer.get_logdir()), writer.get_logdir() == tmp_path / name,
                        writer.file_writer.get_logdir() == str(tmp_path / name), sorted(writer.all_writers)))
    assert got[1][:3] == got[0][:3]
    assert [Path(p).name for p in got[1][3]] == ["microtorch"] and [Path(p).name for p in got[0][3]] == ["torch"]


def test_purge_step(tmp_path):
    def log(writer, lib):
        writer.add_scalar("loss", 1.0, 10)
    assert_same_logs(tmp_path, log, purge_step=7)


def test_writer_settings_and_suffix(tmp_path):
    def log(writer, lib):
        writer.add_scalars("m", {"a": 1.0, "b": 2.0}, 0)
    theirs, _ = assert_same_logs(tmp_path, log, max_queue=3, flush_secs=5, filename_suffix=".v2")
    assert all(suffix == ".v2" for files in theirs.values() for suffix, _ in files)
    settings = []
    for name, _, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / "s" / name), max_queue=3, flush_secs=5, filename_suffix=".v2") as writer:
            settings.append((writer.max_queue, writer.flush_secs, writer.filename_suffix, writer.purge_step,
                             len(writer.default_bins), writer.default_bins[:3], writer.default_bins[-3:],
                             writer.file_writer.event_writer._async_writer._byte_queue.maxsize,
                             writer.file_writer.event_writer._async_writer._worker._flush_secs))
    assert settings[1] == settings[0]


def test_flush_close_and_reopen(tmp_path):
    counts = []
    for name, _, writer_class in LIBRARIES:
        logdir = tmp_path / name
        writer = writer_class(str(logdir), flush_secs=10_000)
        writer.add_scalar("x", 1.0, 0)
        writer.add_scalars("m", {"a": 1.0}, 0)
        writer.flush()
        seen = [len(events) for files in read_logdir(logdir)[0].values() for _, events in files]
        writer.close()
        writer.close()   # a second close does nothing
        writer.flush()
        writer.add_scalar("x", 2.0, 1)   # opens a new event file in the same directory
        writer.close()
        counts.append((seen, {run: [len(e) for _, e in files] for run, files in read_logdir(logdir)[0].items()}))
    assert counts[1] == counts[0]
    assert counts[0][1]["."] == [2, 2]


def test_context_manager_closes(tmp_path):
    states = []
    for name, _, writer_class in LIBRARIES:
        with writer_class(str(tmp_path / name)) as writer:
            assert isinstance(writer, writer_class)
            writer.add_text("t", "x")
        states.append((writer.file_writer, writer.all_writers))
    assert states[1] == states[0] == (None, None)


def test_file_writer(tmp_path):
    from tensorboard.compat.proto.summary_pb2 import Summary

    def log(writer, lib):
        module = torch_tb if lib is torch else micro_tb
        file_writer = module.FileWriter(str(writer.get_logdir()) + "/raw", max_queue=2)
        file_writer.add_summary(Summary(value=[Summary.Value(tag="s", simple_value=1.5)]), np.int32(4))
        file_writer.add_event(event_pb2.Event(step=9, file_version="x"))
        file_writer.flush()
        file_writer.add_summary(Summary(value=[Summary.Value(tag="s", simple_value=2.5)]), 5, walltime=3.0)
        assert file_writer.get_logdir() == str(writer.get_logdir()) + "/raw"
        file_writer.close()
        with pytest.raises(AttributeError, match="'EventFileWriter' object has no attribute 'reopen'"):
            file_writer.reopen()   # (tensorboard 2.x dropped it: torch's reopen fails so, and microtorch's)
    assert_same_logs(tmp_path, log)


def _fake_onnx_model():
    """What onnx.load gives, as far as add_onnx_graph reads it (attributes are protos: it lists their fields)."""
    from types import SimpleNamespace as NS

    from tensorboard.compat.proto.attr_value_pb2 import AttrValue

    def value(name, elem_type, dims):
        shape = NS(dim=[NS(dim_value=d) for d in dims])
        return NS(name=name, type=NS(tensor_type=NS(elem_type=elem_type, shape=shape)))
    nodes = [NS(output=["h"], op_type="Gemm", input=["x", "w"], attribute=[AttrValue(f=1.0), AttrValue(i=1)]),
             NS(output=["y"], op_type="Relu", input=["h"], attribute=[])]
    return NS(graph=NS(input=[value("x", 1, [1, 3])], output=[value("y", 1, [1, 2])], node=nodes))


def test_add_onnx_graph(tmp_path, monkeypatch, capsys):
    from types import SimpleNamespace
    monkeypatch.setitem(sys.modules, "onnx", SimpleNamespace(load=lambda fname: _fake_onnx_model()))

    def log(writer, lib):
        writer.add_onnx_graph("model.onnx")
    assert_same_logs(tmp_path, log)
    assert capsys.readouterr().out == "x\ny\nh\ny\n" * 2


# ---- add_graph ---------------------------------------------------------------------------------------------------

def test_add_graph_raises_torchs_exception_type_and_names_viz(tmp_path, capsys):
    model = microtorch.nn.Sequential(microtorch.nn.Linear(3, 2), microtorch.nn.ReLU())
    x = microtorch.randn(1, 3)
    with torch_tb.SummaryWriter(str(tmp_path / "torch")) as writer:   # torch's tracer on a model it cannot trace
        with pytest.raises(Exception) as theirs:
            writer.add_graph(model, x)
    their_out = capsys.readouterr().out
    with micro_tb.SummaryWriter(str(tmp_path / "microtorch")) as writer:
        with pytest.raises(Exception) as ours:
            writer.add_graph(model, x)
    our_out = capsys.readouterr().out
    assert type(ours.value) is type(theirs.value) is RuntimeError
    assert "microtorch.viz.explore(model, input_to_model)" in str(ours.value)
    assert their_out.endswith("Error occurs, No graph saved\n") and our_out.endswith("Error occurs, No graph saved\n")
    assert model.training
    (theirs_events, _), (ours_events, _) = read_logdir(tmp_path / "torch"), read_logdir(tmp_path / "microtorch")
    assert ours_events == theirs_events   # nothing written but the file header


def test_microtorch_viz_explore_exists():
    viz = pytest.importorskip("microtorch.viz")
    assert callable(viz.explore) and callable(viz.draw)


def test_add_graph_of_no_module_fails_as_torch(tmp_path):
    theirs, ours = both_raise(lambda w, lib: w.add_graph(lambda x: x * 2, lib.ones(1)), tmp_path)
    assert ours == theirs


# ---- the module --------------------------------------------------------------------------------------------------

def test_the_module_exports_what_torchs_does():
    assert micro_tb.__all__ == torch_tb.__all__
    assert micro_tb.RecordWriter is torch_tb.RecordWriter
    import microtorch.utils.tensorboard.summary as ours
    import microtorch.utils.tensorboard.writer  # noqa: F401
    import torch.utils.tensorboard.summary as theirs
    assert ours.__all__ == theirs.__all__
    assert [n for n in dir(torch_tb.SummaryWriter) if not n.startswith("_")] == \
           [n for n in dir(micro_tb.SummaryWriter) if not n.startswith("_")]


BLOCKED = """
import sys, types
class NoTensorboard:
    \"\"\"As if tensorboard were not installed.\"\"\"
    def find_spec(self, name, path=None, target=None):
        if name == "tensorboard" or name.startswith("tensorboard."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
if {old_version!r} == "missing":
    sys.meta_path.insert(0, NoTensorboard())
else:
    fake = types.ModuleType("tensorboard")
    if {old_version!r}:
        fake.__version__ = {old_version!r}
    sys.modules["tensorboard"] = fake
for statement in {statements!r}:
    try:
        exec(statement, {{}})
    except BaseException as e:
        print(type(e).__name__, "|", e, "|", getattr(e, "name", None))
    else:
        print("imported")
"""


def _imports_in_subprocess(statements, old_version):
    """What each import statement gives, one after the other in a Python without tensorboard (old_version
    "missing"), or with a tensorboard of that version ("" for none)."""
    script = BLOCKED.format(statements=statements, old_version=old_version)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


@pytest.mark.parametrize("old_version", ["missing", "1.14.0", ""], ids=["not installed", "too old", "no version"])
def test_import_fails_as_torchs_without_tensorboard(old_version):
    theirs, ours, ours_from, plain = _imports_in_subprocess(
        ["import torch.utils.tensorboard", "import microtorch.utils.tensorboard",
         "from microtorch.utils.tensorboard import SummaryWriter", "import microtorch, microtorch.utils.data"],
        old_version)
    assert theirs != "imported"
    assert ours == ours_from == theirs
    assert plain == "imported"
