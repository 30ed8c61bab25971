"""Compare microtorch's public API with torch 2.13's and write docs/api-coverage.md.

For each namespace (torch, torch.Tensor, torch.nn.functional, ...) every public torch name is
present in microtorch, missing, or out of scope (a rule of OUT_OF_SCOPE names the reason). For a
present callable the keyword names and defaults are compared with torch's signature (inspect's;
for builtins the overloads of torch's type stubs, for torch.special's those its argument parser lists, else the
signatures their docstrings print) and
the differences are listed.
The column "teaching" counts the sources of tools/teaching_apis.txt that call the name.

    python tools/api_coverage.py            # rewrites docs/api-coverage.md
    python tools/api_coverage.py --check    # exit 1 if the committed file is stale
"""
import ast
import importlib
import inspect
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "api-coverage.md"
TEACHING = ROOT / "tools" / "teaching_apis.txt"
TEACHING_SOURCES = ROOT / "tools" / "teaching_sources.txt"

# (torch namespace, microtorch counterpart, which names count)
NAMESPACES = [
    ("torch", "microtorch", "all"),
    ("torch.Tensor", "microtorch.Tensor", "attributes"),
    ("torch.linalg", "microtorch.linalg", "all"),
    ("torch.special", "microtorch.special", "all"),
    ("torch.fft", "microtorch.fft", "all"),
    ("torch.nn.functional", "microtorch.nn.functional", "defined"),
    ("torch.nn", "microtorch.nn", "classes"),
    ("torch.nn.init", "microtorch.nn.init", "all"),
    ("torch.nn.utils", "microtorch.nn.utils", "all"),
    ("torch.nn.utils.parametrize", "microtorch.nn.utils.parametrize", "all"),
    ("torch.nn.utils.parametrizations", "microtorch.nn.utils.parametrizations", "all"),
    ("torch.nn.utils.prune", "microtorch.nn.utils.prune", "all"),
    ("torch.autograd", "microtorch.autograd", "all"),
    ("torch.autograd.graph", "microtorch.autograd.graph", "all"),
    ("torch.autograd.forward_ad", "microtorch.autograd.forward_ad", "all"),
    ("torch.autograd.functional", "microtorch.autograd.functional", "all"),
    ("torch.func", "microtorch.func", "all"),
    ("torch.optim", "microtorch.optim", "all"),
    ("torch.optim.lr_scheduler", "microtorch.optim.lr_scheduler", "all"),
    ("torch.utils.data", "microtorch.utils.data", "all"),
]

# Out of scope: (regex on the qualified name, reason). A name is out of scope only when it needs what
# a numpy engine for teaching does not have: other hardware, another runtime (JIT, dispatch), a tensor
# representation other than a dense numpy array, several processes, or runtime settings with no
# meaning on numpy. Everything else is in scope, implemented or not. First match wins; a name
# microtorch has anyway counts as present.
OUT_OF_SCOPE = [
    (r"cuda|cudnn|\bmps\b|xpu|mtia|hpu|npu|ipu|xla|vulkan|mkldnn|miopen|\bmkl|openmp|metal|accelerator|"
     r"pin_memory|is_pinned|\.get_device$|\bipc|DeviceType|device_of|\bEvent$|Stream\b|set_stream|"
     r"synchronize|empty_cache|_cuda|cpu_|DeviceMesh", "GPUs, accelerators and their streams"),
    (r"quantiz|\bq_|\.q_|\bqint|\bquint|QInt|QUInt|int_repr|dequantize|qscheme|fake_quant|per_channel|"
     r"per_tensor|fbgemm|_packed_|packed_|\.ao\b", "quantization"),
    (r"sparse|\w*_coo\b|csr|csc|bsr|bsc|to_dense|crow_|ccol_|col_indices|row_indices|Tensor\.indices$|"
     r"Tensor\.values$|_nnz|coalesce|SparseAdam|smm$|\bsspaddmm|\bhspmm|saddmm", "sparse tensors"),
    (r"distributed|DistributedDataParallel|SyncBatchNorm|\brpc\b|DistributedSampler|get_worker_info|"
     r"worker", "several processes (distributed training, loader workers)"),
    (r"\bjit\b|script|\btrace\b|compile|\bfx\b|export|dynamo|inductor|onnx|\.ops$|\blibrary\b|"
     r"\bTag\b|has_torch_function|handle_torch_function|torch_function|torch_dispatch|\bclasses\b|"
     r"overrides|\bSym[A-Z]\w*|sym_|GuardOn|unsafe_(?!split|chunk)|\bvmap_impl|is_inference_mode_enabled_|"
     r"DisableTorchFunction|\bcond$|while_loop|\bassociative_scan|_assert|functionalize|"
     r"register_fake|custom_op|opcheck|\bwrap_|\bTypedStorage", "JIT, compilation and dispatch internals"),
    (r"nested|\bnames\b|\brename|refine_names|align_to|align_as|has_names|jagged",
     "named and nested tensors"),
    (r"storage|Storage|data_ptr|share_memory|is_shared|record_stream|\bset_$|untyped|element_size|nbytes|"
     r"itemsize|dlpack|from_file|is_set_to|frombuffer|from_buffer|\bnew_empty_strided|"
     r"\bempty_strided|\bmodule_load|\bget_file_path", "raw memory and storage"),
    (r"\buint16|\buint32|\buint64", "the unsigned dtypes torch 2 added with few ops (numpy has them; microtorch "
     "leaves them out)"),
    (r"bfloat16|float8|\bint[1-7]\b|\buint[1-7]\b|\bbits\w*|complex32|"
     r"chalf|\bbf16|e4m3|e5m2|e8m0|float4|BFloat16", "dtypes numpy has no equivalent of"),
    (r"memory_format|contiguous_format|channels_last|preserve_format|\bstride\b|as_strided|resize|"
     r"\blayout\b|\bstrided$|is_non_overlapping|to_mkldnn|\bis_contiguous", "memory layout and strides"),
    (r"profiler|emit_nvtx|emit_itt|record_function|kineto", "profiling"),
    (r"\bhub\b|\bpackage\b|datapipes|DataChunk|DataPipe|functional_datapipe|"
     r"guaranteed_datapipes_determinism|non_deterministic|runtime_validation|argument_validation",
     "datapipes and model hub"),
    (r"deterministic|warn_always|float32_matmul|flush_denormal|num_threads|num_interop|"
     r"default_device|get_device_module|autocast|\bamp\b|GradScaler",
     "runtime settings (device-, precision- and thread-related)"),
    (r"Generator\.(graphsafe|clone_state)|\bvitals|\bset_vital|\bread_vitals|\bis_anomaly_check",
     "internals"),
    # fused low-precision GPU matrix products
    (r"functional\.(scaled_mm|grouped_mm|scaled_grouped_mm|ScalingType|SwizzleType)$",
     "low-precision (float8 / MX) and grouped GPU matrix-multiply kernels with their scaling and swizzle enums"),
    # Tensor methods
    (r"Tensor\.is_mps$|Tensor\.is_maia$", "GPUs, accelerators and their streams"),
    (r"Tensor\.dense_dim$", "sparse tensors"),
    (r"Tensor\.name$|to_padded_tensor", "named and nested tensors"),
    (r"Tensor\.index$", "first-class dimensions (functorch.dim binds dims to a tensor)"),
    (r"Tensor\.(eig|symeig|lstsq|solve|reinforce)$", "removed from torch 2 (calling them raises an error there)"),
    (r"Tensor\.hash_tensor$", "returns a uint64 tensor (uint64 is out of scope: see the dtypes above)"),
    (r"Tensor\.slice_inverse$", "JIT, compilation and dispatch internals"),
    # the torch namespace
    (r"^torch\.(\w*Type|AliasDb|Argument|ArgumentSpec|CompleteArgumentSpec|Block|CallStack|Capsule|Code|"
     r"CompilationUnit|ConcreteModuleType\w*|DeepCopyMemoTable|ErrorReport|ExecutionPlan|FileCheck|FunctionSchema|"
     r"Gradient|Graph|GraphExecutorState|JITException|LiteScriptModule|\w*Logger|LoggerBase|ModuleDict|"
     r"ParameterDict|BufferDict|Node|OperatorInfo|Script\w+|StaticModule|TracingState|Use|Value|AggregationType|"
     r"AVG|SUM|Benchmark\w+|import_ir_module|merge_type_from_type_comment|parse_ir|parse_schema|parse_type_comment|"
     r"unify_type_list|fork|wait|Future|DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|slice_inverse)$",
     "JIT, compilation and dispatch internals"),
    (r"^torch\.\w+_copy$", "functionalization's copying forms of view ops (compilation internals; the views "
     "themselves are present)"),
    (r"^torch\.batch_norm_(stats|elemt|gather_stats\w*|backward_\w+|update_stats)$",
     "several processes (distributed training, loader workers)"),
    (r"^torch\.(AcceleratorError|OutOfMemoryError)$", "GPUs, accelerators and their streams"),
    (r"^torch\.prepare_multiprocessing_environment$", "several processes (distributed training, loader workers)"),
    (r"^torch\.(FatalError|classproperty|thread_safe_generator|PyTorchFileReader|PyTorchFileWriter)$", "internals"),
    (r"^torch\.bit$", "dtypes numpy has no equivalent of"),
    (r"^torch\.hash_tensor$", "returns a uint64 tensor (uint64 is out of scope: see the dtypes above)"),
    (r"^torch\.(eig|symeig|lstsq|solve|matrix_rank)$", "removed from torch 2 (calling them raises an error there)"),
    (r"^torch\.(native_norm|spmm)$", "sparse tensors"),
    (r"^torch\.choose_qparams_optimized$", "quantization"),
    (r"^torch\.lobpcg$", "an iterative eigensolver meant for large sparse matrices (dense `linalg.eigh` is present)"),
    (r"^torch\.utils\.data\._DatasetKind$", "DataLoader's internal fetcher factory (torch's own loader code uses it)"),
]
_SCOPE_RULES = [(re.compile(p), reason) for p, reason in OUT_OF_SCOPE]

# torch keyword names whose absence is not reported (they concern memory and hardware)
IGNORED_PARAMS = {"self", "out", "layout", "pin_memory", "memory_format", "names", "_stacklevel", "device",
                  "non_blocking", "foreach", "fused", "differentiable", "capturable", "use_fake_quant"}


# ---- the names ----------------------------------------------------------------------------------
def public_names(obj, which):
    """Public names of a torch module or class, as the report counts them."""
    if which == "attributes":
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    if which == "all" and hasattr(obj, "__all__"):
        names = set(obj.__all__)
        if obj.__name__ == "torch":  # a few documented functions are not in torch.__all__
            names |= {n for n in dir(obj) if not n.startswith("_") and _defined_in_torch(getattr(obj, n))}
        return sorted(n for n in names if not isinstance(getattr(obj, n, None), types.ModuleType))
    out = []
    for n in dir(obj):
        v = getattr(obj, n)
        if n.startswith("_") or isinstance(v, types.ModuleType) or not _defined_in_torch(v):
            continue
        if which == "classes" and not isinstance(v, type):
            continue
        if which == "defined" and getattr(v, "__module__", "") not in (obj.__name__, "torch", "torch._C",
                                                                       "torch._C._nn", None):
            continue
        out.append(n)
    return sorted(out)


def _defined_in_torch(v):
    mod = getattr(v, "__module__", None) or ""
    return (callable(v) or isinstance(v, type)) and (mod.startswith("torch") or mod == "")


def scope_reason(qualname):
    for rule, reason in _SCOPE_RULES:
        if rule.search(qualname):
            return reason
    return None


def resolve(path):
    """The object at a dotted path (a module, or a class inside one)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


# ---- signatures -----------------------------------------------------------------------------------
class Token(str):
    """A default as a docstring prints it (source text, e.g. `False`, `'mean'`, `torch.strided`)."""


class Params:
    """A callable's parameters: name -> default (or REQUIRED), and whether it takes **kwargs."""
    REQUIRED = object()

    def __init__(self, params, var_kw=False):
        self.params, self.var_kw = params, var_kw


def _from_inspect(fn, drop_first):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    items = [p for p in sig.parameters.values()]
    if drop_first and items and items[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD):
        items = items[1:]
    params = {p.name: (Params.REQUIRED if p.default is inspect.Parameter.empty else p.default)
              for p in items if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return Params(params, any(p.kind == p.VAR_KEYWORD for p in items))


def _split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _from_docstring(fn, name):
    """The union of the signatures a builtin's docstring prints, e.g. `sum(input, dim, keepdim=False)`."""
    doc = getattr(fn, "__doc__", None) or ""
    found, params = False, {}
    for m in re.finditer(rf"^\s*(?:\.\. function:: )?(?:[\w.]*\.)?{re.escape(name)}\(((?:[^()]|\([^()]*\))*)\)\s*(?:->.*)?$",
                         doc, re.M):
        found = True
        for arg in _split_args(m.group(1)):
            arg = arg.split(":")[0] if "=" not in arg else arg
            key, _, default = arg.partition("=")
            key = key.split(":")[0].strip().lstrip("*")
            if key and key not in ("self",) and re.fullmatch(r"\w+", key):
                params.setdefault(key, Token(default.strip()) if default else Params.REQUIRED)
    return Params(params, False) if found else None


_STUBS = {}


def _stub_overloads(where):
    """name -> the overloads' argument lists in one of torch's type stubs (torch/_C/*.pyi), which
    torch generates from the signatures its argument parser accepts: `where` is "_VariableFunctions"
    (torch.*) or "TensorBase" (the Tensor methods)."""
    if where not in _STUBS:
        import torch
        stub = Path(torch.__file__).parent / "_C" / ("__init__.pyi" if where == "TensorBase"
                                                     else f"{where}.pyi")
        tree = ast.parse(stub.read_text()) if stub.exists() else ast.Module(body=[], type_ignores=[])
        body = tree.body
        if where == "TensorBase":
            body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == where), [])
        _STUBS[where] = {}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                _STUBS[where].setdefault(node.name, []).append(node.args)
    return _STUBS[where]


def _from_stub(fn, name):
    """The union of the overloads' parameters a builtin's stub declares (None: no stub for it)."""
    if getattr(fn, "__objclass__", None) is not None:
        where = "TensorBase"
    elif getattr(fn, "__self__", None) is None and getattr(fn, "__module__", None) == "torch":
        where = "_VariableFunctions"
    else:
        return None
    overloads = _stub_overloads(where).get(name)
    if not overloads:
        return None
    params = {}
    for args in overloads:
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, (arg, default) in enumerate(list(zip(positional, defaults)) + list(zip(args.kwonlyargs,
                                                                                   args.kw_defaults))):
            name = arg.arg
            if name == "self" and i == 0 and where != "TensorBase":
                name = "input"  # (a function's stub says self where its parser says input: torch.numel(input=x))
            if name != "self":
                params.setdefault(name, Params.REQUIRED if default is None else Token(ast.unparse(default)))
    return Params(params, False)


def _from_parser(fn):
    """torch.special's builtins have no stub: the keywords of the overloads their argument parser lists when called
    without arguments (None where it lists none). Their docstrings are not enough: they name the polynomials' x
    `input`, a keyword the parser refuses."""
    if getattr(fn, "__module__", None) != "torch._C._special":
        return None
    try:
        fn()
    except TypeError as e:
        overloads = re.findall(r"^ \* \((.*)\)$", str(e), re.M)
    else:
        return None
    params = {}
    for sig in overloads:
        for arg in _split_args(sig):
            decl, _, default = arg.partition("=")
            key = decl.split()[-1] if decl.split() else ""
            if re.fullmatch(r"\w+", key) and key != "self":
                params.setdefault(key, Token(default.strip()) if default else Params.REQUIRED)
    return Params(params, False) if overloads else None


def torch_params(fn, name, method):
    target = fn.__init__ if isinstance(fn, type) else fn
    p = _from_inspect(fn if isinstance(fn, type) else target, method)
    if p is None or (not p.params and p.var_kw):
        p = _from_stub(fn, name) or _from_parser(fn) or _from_docstring(fn, name) or p
    return p


def _literal(v):
    if isinstance(v, Token):
        try:
            return ast.literal_eval(v)
        except (ValueError, SyntaxError):
            return _UNKNOWN
    if v is None or isinstance(v, (bool, int, float, str, tuple)):
        return v
    return _UNKNOWN


_UNKNOWN = object()


def _differ(a, b):
    return a != b or (type(a) is not type(b) and bool in (type(a), type(b)))


def compare(torch_p, ours):
    """Differences a user of torch's keywords would meet, as short phrases."""
    if torch_p is None or ours is None:
        return []
    notes = []
    for key, default in torch_p.params.items():
        if key in IGNORED_PARAMS:
            continue
        if key not in ours.params:
            if not ours.var_kw:
                notes.append(f"no `{key}=`")
            continue
        mine = ours.params[key]
        if mine is Params.REQUIRED and default is not Params.REQUIRED:
            notes.append(f"`{key}` required (torch: default {_show(default)})")
        elif Params.REQUIRED not in (mine, default):
            a, b = _literal(mine), _literal(default)
            if _UNKNOWN not in (a, b) and _differ(a, b):
                notes.append(f"`{key}` default {_show(mine)} (torch: {_show(default)})")
    extra = [k for k in ours.params if k not in torch_p.params and not k.startswith("_")
             and k not in IGNORED_PARAMS]
    if extra and not torch_p.var_kw:
        notes.append("extra " + ", ".join(f"`{k}=`" for k in extra))
    return notes


def _show(v):
    return str(v) if isinstance(v, Token) else repr(v)


# ---- the report ---------------------------------------------------------------------------------------
def teaching_index():
    """qualified torch name -> sorted source ids that call it (tools/teaching_apis.txt)."""
    if not TEACHING.exists():
        return {}
    out = {}
    for line in TEACHING.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, sources = line.partition("\t")
            out[name.strip()] = sorted(s for s in sources.split(",") if s.strip())
    return out


def teaching_sources():
    rows = []
    if TEACHING_SOURCES.exists():
        for line in TEACHING_SOURCES.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                rows.append(line.split("\t"))
    return rows


def survey_namespace(torch_path, mt_path, which, teaching):
    """Rows (name, status, teaching sources, notes) for one namespace."""
    tobj, mobj = resolve(torch_path), resolve(mt_path)
    method = torch_path == "torch.Tensor"
    rows = []
    for name in public_names(tobj, which):
        qual = f"{torch_path}.{name}"
        used = teaching.get(qual, [])
        tval = inspect.getattr_static(tobj, name, None) if method else getattr(tobj, name, None)
        if hasattr(mobj, name):
            rows.append((name, "present", used, _signature_notes(tval, getattr(mobj, name), name, method)))
        else:
            reason = scope_reason(qual)
            rows.append((name, "out of scope" if reason else "missing", used, reason or ""))
    return rows


def _signature_notes(tval, mval, name, method):
    if isinstance(tval, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) or not callable(mval):
        return ""
    if isinstance(tval, (staticmethod, classmethod)):
        tval = tval.__func__
    if not callable(tval):
        return ""
    theirs = torch_params(tval, name, method and not isinstance(tval, (types.BuiltinFunctionType,
                                                                       types.MethodDescriptorType)))
    ours = _from_inspect(mval.__init__ if isinstance(mval, type) else mval,
                         method or isinstance(mval, type))
    if isinstance(mval, type) and isinstance(tval, type):
        theirs = _from_inspect(tval.__init__, True)
    return "; ".join(compare(theirs, ours))


def summarize(rows):
    present = sum(r[1] == "present" for r in rows)
    missing = sum(r[1] == "missing" for r in rows)
    out = sum(r[1] == "out of scope" for r in rows)
    used = [r for r in rows if r[2] and r[1] != "out of scope"]
    return present, missing, out, sum(r[1] == "present" for r in used), len(used)


def _pct(a, b):
    return f"{100 * a / b:.1f}%" if b else "n/a"


HEADER = """# API coverage: microtorch against torch {version}

Generated by `tools/api_coverage.py` from the installed torch (do not edit by hand; the test
`tests/test_api_coverage.py` fails when this file is stale). Every public name of each torch namespace
is **present** in microtorch, **missing**, or **out of scope** with the reason (the rule table
`OUT_OF_SCOPE` in the script: hardware, quantization, sparse, distributed, JIT and dispatch, named and
nested tensors, storage and strides, dtypes numpy lacks, runtime settings). Everything else is in scope
and counts against coverage, implemented or not.

For present callables the notes compare keyword names and defaults with torch's signature
(`inspect.signature`; for builtins the overloads of torch's type stubs `torch/_C/*.pyi`, for torch.special's
the overloads its argument parser lists, else the signatures their docstrings print): `no `x=`` is a torch
keyword microtorch does not take, `extra` are keywords torch does not have. Keywords about memory and
hardware (`out`, `device`, `layout`, `pin_memory`, `memory_format`, `names`, `foreach`, `fused`, ...)
are not compared.

The column *teaching* lists the sources (see [the survey](#teaching-material)) whose code calls the name.
"""


def render():
    import torch
    teaching = teaching_index()
    sections, summary = [], []
    for torch_path, mt_path, which in NAMESPACES:
        rows = survey_namespace(torch_path, mt_path, which, teaching)
        p, m, o, up, un = summarize(rows)
        summary.append(f"| `{torch_path}` | {len(rows)} | {p} | {m} | {o} | **{_pct(p, p + m)}** | "
                       f"{up} / {un} ({_pct(up, un)}) |")
        sections.append(_section(torch_path, rows))
    lines = [HEADER.format(version=torch.__version__.split("+")[0]), "## Summary", "",
             "| namespace | torch names | present | missing | out of scope | in-scope coverage | "
             "used in teaching: present / in scope |", "|---|---|---|---|---|---|---|"] + summary
    lines += ["", _teaching_section(teaching)] + sections
    return "\n".join(lines).rstrip() + "\n"


def _section(torch_path, rows):
    out = [f"## `{torch_path}`", "", "| name | status | used in teaching material | notes |", "|---|---|---|---|"]
    for name, status, used, notes in rows:
        if status != "out of scope":
            shown = "present" if status == "present" else "**missing**"
            out.append(f"| `{name}` | {shown} | {', '.join(used)} | {notes} |")
    by_reason = {}
    for name, status, _, reason in rows:
        if status == "out of scope":
            by_reason.setdefault(reason, []).append(name)
    if by_reason:
        out += ["", "Out of scope:", ""]
        out += [f"- {reason}: " + ", ".join(f"`{n}`" for n in names) for reason, names in sorted(by_reason.items())]
    return "\n".join(out) + "\n"


def _teaching_section(teaching):
    out = ["## Teaching material", "",
           "What tutorials, courses and textbooks call (`tools/teaching_survey.py` extracted it from the "
           "code of these sources into `tools/teaching_apis.txt`):", "", "| id | source | address |", "|---|---|---|"]
    out += [f"| {r[0]} | {r[1]} | {r[2]} |" for r in teaching_sources() if len(r) >= 3]
    outside, missing = [], []
    covered = {f"{t}.{n}" for t, _, w in NAMESPACES for n in public_names(resolve(t), w)}
    for name, used in sorted(teaching.items()):
        if name not in covered:
            outside.append(f"`{name}` ({_status_of(name)}; {', '.join(used)})")
    if outside:
        out += ["", "Called in teaching material, outside the namespaces compared below:", "",
                ", ".join(outside)]
    return "\n".join(out) + "\n"


def _status_of(qualname):
    """present / missing / out of scope for any dotted torch name, by looking it up in microtorch."""
    parts = qualname.split(".")
    try:
        obj = importlib.import_module("microtorch")
        for p in parts[1:]:
            obj = getattr(obj, p) if not isinstance(obj, types.ModuleType) or hasattr(obj, p) else \
                importlib.import_module(f"{obj.__name__}.{p}")
        return "present"
    except (AttributeError, ImportError):
        return "out of scope" if scope_reason(qualname) else "missing"


def main(argv):
    text = render()
    if "--check" in argv:
        current = REPORT.read_text() if REPORT.exists() else ""
        if current != text:
            print(f"{REPORT} is stale: run python tools/api_coverage.py")
            return 1
        return 0
    REPORT.write_text(text)
    print(f"wrote {REPORT}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
