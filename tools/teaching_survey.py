"""Which torch APIs does teaching material call? Parse the code of the sources listed in
tools/teaching_sources.txt and write tools/teaching_apis.txt (one API a line, then the ids of the
sources that call it). The sources are not stored here: a source with a repository is read from a
local snapshot of it (`--mirror DIR`, holding `owner+name/repo` git directories); a source marked
`read` was read on its site, and the APIs it calls are listed in tools/teaching_read.txt.

    python tools/teaching_survey.py --mirror /work/.mirror

How names are resolved: imports give aliases (`import torch.nn as nn`, `from torch.func import vmap`),
so `nn.Linear(...)` is `torch.nn.Linear`; a method called on any other object is counted as a
`torch.Tensor` method when Tensor has that name and common Python containers do not.
"""
import argparse
import ast
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
SOURCES, READ, OUT = TOOLS / "teaching_sources.txt", TOOLS / "teaching_read.txt", TOOLS / "teaching_apis.txt"

# a method of these is not taken for a Tensor method (`d.items()`, `xs.append()`, `s.split()`)
NOT_TENSOR = set(dir(list)) | set(dir(dict)) | set(dir(str)) | set(dir(set)) | {
    "train", "eval", "parameters", "named_parameters", "state_dict", "load_state_dict", "step", "zero_grad",
    "forward", "modules", "children", "add_module", "register_buffer", "cuda", "cpu", "to", "type", "apply",
    "float", "double", "half", "bool", "int", "long", "data", "format", "join", "split", "get", "keys", "size",
    "name"}


def read_sources():
    rows = []
    for line in SOURCES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            sid, title, address, repo, paths = (line.split("\t") + [""] * 5)[:5]
            rows.append(dict(id=sid, title=title, address=address, repo=repo, paths=paths.split()))
    return rows


def files_of(source, mirror):
    """(path, text) of every file of a source in its repository snapshot."""
    git = Path(mirror) / source["repo"].replace("/", "+") / "repo"
    listing = subprocess.run(["git", "-C", str(git), "ls-tree", "-r", "--name-only", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    for path in listing:
        if any(fnmatch.fnmatch(path, pattern) for pattern in source["paths"]):
            text = subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], capture_output=True,
                                  text=True, check=True).stdout
            yield path, text


def code_of(path, text):
    """The Python code of a .py file, a notebook's code cells, or a d2l page's PyTorch code blocks."""
    if path.endswith(".ipynb"):
        cells = json.loads(text).get("cells", [])
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in cells if c.get("cell_type") == "code"]
    if path.endswith(".md"):
        blocks = re.findall(r"```\{\.python \.input\}\n(.*?)```", text, re.S)
        return [b for b in blocks if re.match(r"\s*%%tab [^\n]*\b(pytorch|all)\b", b) or not b.lstrip().startswith("%%tab")]
    return [text]


def _clean(code):
    """Drop IPython magics and shell lines, which are not Python."""
    return "\n".join("" if line.lstrip().startswith(("%", "!", "?")) else line for line in code.split("\n"))


class Calls(ast.NodeVisitor):
    """Collects the qualified torch names a module's code uses."""

    def __init__(self, tensor_attrs, aliases):
        self.aliases, self.tensor_attrs, self.found = aliases, tensor_attrs, set()

    def visit_Import(self, node):
        for a in node.names:
            if a.name.split(".")[0] == "torch":
                self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else "torch"

    def visit_ImportFrom(self, node):
        if node.module and node.module.split(".")[0] == "torch":
            for a in node.names:
                self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                self.found.add(f"{node.module}.{a.name}")

    def visit_If(self, node):
        """d2l's multi-framework blocks: only the `if tab.selected(..., 'pytorch')` branches are PyTorch."""
        test = node.test
        if isinstance(test, ast.Call) and _chain(test.func) == ["tab", "selected"]:
            frameworks = {a.value for a in test.args if isinstance(a, ast.Constant)}
            if "pytorch" in frameworks:
                for stmt in node.body:
                    self.visit(stmt)
            for stmt in node.orelse:
                self.visit(stmt)
            return
        self.generic_visit(node)

    def visit_Attribute(self, node):
        chain = _chain(node)
        if chain and chain[0] in self.aliases:
            self.found.add(".".join([self.aliases[chain[0]]] + chain[1:]))
        elif node.attr in self.tensor_attrs and node.attr not in NOT_TENSOR:
            self.found.add(f"torch.Tensor.{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.aliases and "." in self.aliases[node.id]:
            self.found.add(self.aliases[node.id])


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id] + parts[::-1] if isinstance(node, ast.Name) else None


def apis_of(codes, tensor_attrs):
    aliases, found = {}, set()
    for code in codes:
        try:
            tree = ast.parse(_clean(code))
        except SyntaxError:
            continue
        visitor = Calls(tensor_attrs, aliases)
        visitor.visit(tree)
        found |= visitor.found
    return {name for name in found if not re.search(r"\.(__\w+__|_\w*)$", name)}


def read_by_hand():
    """APIs of the sources read on their sites: `id<TAB>api api ...` lines."""
    out = {}
    if READ.exists():
        for line in READ.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                sid, _, apis = line.partition("\t")
                out.setdefault(sid, set()).update(apis.split())
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", required=True, help="directory of owner+name/repo git snapshots")
    args = parser.parse_args(argv)
    import torch
    tensor_attrs = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    used = {}
    for source in read_sources():
        if source["repo"] == "read":
            continue
        codes = [c for path, text in files_of(source, args.mirror) for c in code_of(path, text)]
        for api in apis_of(codes, tensor_attrs):
            used.setdefault(api, set()).add(source["id"])
    for sid, apis in read_by_hand().items():
        for api in apis:
            used.setdefault(api, set()).add(sid)
    used = {api: ids for api, ids in used.items() if _in_torch(api, torch)}
    lines = [f"{api}\t{','.join(sorted(ids, key=_order))}" for api, ids in sorted(used.items())]
    OUT.write_text("# torch API<TAB>ids of the sources calling it (tools/teaching_sources.txt); made by "
                   "tools/teaching_survey.py\n" + "\n".join(lines) + "\n")
    print(f"{len(lines)} APIs from {len(read_sources())} sources -> {OUT}")


def _in_torch(api, torch):
    """Whether the dotted name exists in torch (code for other frameworks, typos and user attributes
    that only look like torch names are dropped)."""
    import importlib
    obj = torch
    for i, part in enumerate(api.split(".")[1:], start=1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(api.split(".")[:i + 1]))
        except ImportError:
            return False
    return True


def _order(sid):
    return (len(sid), sid)


if __name__ == "__main__":
    main(sys.argv[1:])
