"""torch.onnx's names that course scripts import at the top (PyTorch's examples: `import torch.onnx`, then
`torch.onnx.export(...)` behind a command-line flag). microtorch has no graph tracer to export from, so `export`
refuses with the error torch's exporter raises for a missing part (OnnxExporterError), saying what to do instead;
`is_in_onnx_export()` is False, as it is outside an export."""

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (torch.onnx.errors.OnnxExporterError)."""


def export(model, args=(), f=None, *rest, **kwargs):
    raise OnnxExporterError("torch.onnx.export: microtorch cannot export a model to ONNX (it records autograd graphs, "
                            "not a traceable program). Save the weights with microtorch.save(model.state_dict(), "
                            "path), load them into the same model under torch, and export from there.")


def is_in_onnx_export():
    return False
