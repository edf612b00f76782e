"""Gemflow from Python: workflows and nodes, NumPy in and out.

    import gemflow
    wf = gemflow.load("workflows/nmr_structure.yaml")
    for d in wf.validate():
        print(d)                       # file:line:col: error: node 'x', parameter 'y': ...
    results = wf.run(set={"dg.trials": 8}, device="cpu", out="out/nmr")
    results["dg.structure"]            # a gemflow.Structure: coordinates + atom records

    smooth = gemflow.node("distgeom.triangle_smoothing")
    help(smooth)                       # ports, parameters, limits, units, docs
    out = smooth(bounds=b, tolerance=1e-4, device="cpu")
    out["bounds"].upper                # a read-only NumPy view of the result, no copy

See docs/python.md for the whole API, the conversions of each data type and what is copied.
"""

from __future__ import annotations

import inspect
import keyword
import os
import tempfile
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

import numpy as np

from . import _gemflow
from ._gemflow import Data, Diagnostic, GemflowError, NodeError, RunEvent

__version__ = _gemflow.__version__

__all__ = [
    "load", "Workflow", "node", "nodes", "plugins", "load_plugins", "Diagnostic", "RunEvent", "Data",
    "GemflowError", "NodeError", "WorkflowError", "Image", "Table", "Segmentation", "Signal", "Scores",
    "Structure", "DistanceBounds", "TriMesh", "CirclePacking", "to_python", "to_gemflow",
]


class WorkflowError(GemflowError):
    """A workflow that cannot be loaded or run: `diagnostics` holds the problems (file, line,
    node, parameter, message), `str()` the same text as `gemflow validate` prints."""

    def __init__(self, message: str, diagnostics: Iterable[Diagnostic] = ()):
        self.diagnostics = list(diagnostics)
        lines = [message] + [str(d) for d in self.diagnostics]
        super().__init__("\n".join(lines))


# ---- Python forms of the data types ---------------------------------------------------------
#
# Each keeps the Gemflow value it was made from (`_gemflow_data`), so that passing it back into a
# node costs no conversion and no copy. Arrays are read-only views of that value; changing an
# attribute drops the link, and the object is converted again when passed on.


class _Record:
    """Attribute access over the dict the C++ side returns."""

    _fields: tuple = ()

    def __init__(self, data: Optional[Data] = None, **fields):
        object.__setattr__(self, "_gemflow_data", data)
        for k in self._fields:
            object.__setattr__(self, k, fields.get(k))

    def __setattr__(self, name, value):
        object.__setattr__(self, "_gemflow_data", None)  # edited: convert again when passed on
        object.__setattr__(self, name, value)

    def __repr__(self):
        d = self._gemflow_data
        return f"<gemflow.{type(self).__name__}: {d.summary() if d is not None else 'edited in Python'}>"


def _short_list_repr(name, items, head, shown=5):
    rows = "".join(f"\n  {r!r}" for r in items[:shown])
    more = f"\n  ... {len(items) - shown} more" if len(items) > shown else ""
    return f"<gemflow.{name}: {head}{rows}{more}>"


class Image(np.ndarray):
    """An RGBA image, H×W×4: float32 linear premultiplied, or uint8 sRGB with straight alpha (the
    SDK's two formats). A NumPy array (a read-only view of the node's result); shows itself as a
    PNG in Jupyter (written by the io plugin's PNG writer)."""

    def __array_finalize__(self, obj):
        self._gemflow_data = getattr(obj, "_gemflow_data", None)

    def _repr_png_(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "image.png")
            node("io.write_image")(image=np.asarray(self) if self._gemflow_data is None else self, path=path)
            with open(path, "rb") as f:
                return f.read()


class Table(list):
    """Rows as a list of dicts (records) with `columns` in order; `to_pandas()` gives a DataFrame.
    Shown as an HTML table in Jupyter."""

    def __init__(self, records=(), columns=(), data=None):
        super().__init__(records)
        self.columns = list(columns)
        self._gemflow_data = data

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(list(self), columns=self.columns)

    def __repr__(self):
        return _short_list_repr("Table", self, f"{len(self)} rows × {len(self.columns)} columns {self.columns}")

    def _repr_html_(self):
        import html
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in self.columns) + "</tr>"
                       for r in self[:200])
        more = f"<p>{len(self) - 200} more rows</p>" if len(self) > 200 else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


class Segmentation(list):
    """Segments as a list of dicts {start, end, label, score} (end exclusive, in samples), with
    `length`, `labels` and `sample_rate`. Shown as a table and a bar of segments in Jupyter."""

    def __init__(self, segments=(), length=0, labels=(), sample_rate=0.0, data=None):
        super().__init__(segments)
        self.length = length
        self.labels = list(labels)
        self.sample_rate = sample_rate
        self._gemflow_data = data

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(list(self), columns=["start", "end", "label", "score"])

    def __repr__(self):
        return _short_list_repr("Segmentation", self, f"{len(self)} segments over {self.length} samples")

    def _repr_html_(self):
        import html
        colours = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7"]
        n = max(self.length, 1)
        bar = "".join(
            f'<div title="{html.escape(str(s["label"]))} [{s["start"]}, {s["end"]})" style="position:absolute;'
            f'left:{100 * s["start"] / n:.3f}%;width:{100 * (s["end"] - s["start"]) / n:.3f}%;height:100%;'
            f'background:{colours[(self.labels.index(s["label"]) if s["label"] in self.labels else 0) % len(colours)]}">'
            f"</div>" for s in self)
        legend = " ".join(f'<span style="color:{colours[i % len(colours)]}">■</span> {html.escape(l)}'
                          for i, l in enumerate(self.labels))
        rows = "".join(f"<tr><td>{s['start']}</td><td>{s['end']}</td><td>{html.escape(str(s['label']))}</td>"
                       f"<td>{s['score']:.4g}</td></tr>" for s in self[:100])
        return (f'<div style="position:relative;height:18px;width:100%;background:#eee">{bar}</div>'
                f"<p>{legend} — {len(self)} segments over {self.length} samples</p>"
                f"<table><tr><th>start</th><th>end</th><th>label</th><th>score</th></tr>{rows}</table>")


class Signal(_Record):
    """T samples × D channels (`samples`, a read-only view), on a regular axis (`sample_rate` Hz,
    `start_time` s) or explicit `times` (s); `channels` and `units` name the columns.
    `np.asarray(signal)` is `samples`."""

    _fields = ("samples", "sample_rate", "start_time", "times", "channels", "units")

    def __array__(self, dtype=None):
        return np.asarray(self.samples, dtype=dtype)


class Scores(_Record):
    """Per-sample class scores: `scores` T×C (a read-only view), `labels` (C), `sample_rate`."""

    _fields = ("scores", "labels", "sample_rate")

    def __array__(self, dtype=None):
        return np.asarray(self.scores, dtype=dtype)


class Structure(_Record):
    """Atoms and coordinate models: `coordinates` (models × atoms × 3, Å; a copy), `atoms` (one
    dict per atom: name, element, residue, residue_number, insertion, chain, segment, hetero,
    serial, occupancy, b_factor), `bonds` (K×2 atom indices), `title`. Shown as a static
    picture (a projection of the first model) in Jupyter."""

    _fields = ("title", "atoms", "coordinates", "bonds")

    def _repr_svg_(self):
        xyz = np.asarray(self.coordinates)
        if xyz.ndim != 3 or xyz.shape[0] == 0 or xyz.shape[1] == 0:
            return None
        p = xyz[0]
        p = p - p.mean(axis=0)
        # the two main axes of the model: a view across its largest extent
        _, _, vt = np.linalg.svd(p, full_matrices=False)
        q = p @ vt[:2].T
        lo, hi = q.min(axis=0), q.max(axis=0)
        scale = 380.0 / max(float((hi - lo).max()), 1e-9)
        q = (q - lo) * scale + 10.0
        colours = {"C": "#555", "N": "#3050f8", "O": "#ff0d0d", "S": "#e6c000", "H": "#bbb", "P": "#ff8000"}
        elements = [a.get("element", "C") for a in self.atoms]
        lines = []
        bonds = np.asarray(self.bonds, dtype=np.int64).reshape(-1, 2)
        if len(bonds) == 0:  # a trace through consecutive CA atoms
            ca = [i for i, a in enumerate(self.atoms) if a.get("name") == "CA"]
            bonds = np.array([(a, b) for a, b in zip(ca, ca[1:])
                              if self.atoms[a].get("chain") == self.atoms[b].get("chain")], dtype=np.int64).reshape(-1, 2)
        for a, b in bonds:
            lines.append(f'<line x1="{q[a, 0]:.1f}" y1="{q[a, 1]:.1f}" x2="{q[b, 0]:.1f}" y2="{q[b, 1]:.1f}" '
                         f'stroke="#888" stroke-width="1"/>')
        dots = [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.6" fill="{colours.get(e, "#a0a")}"/>'
                for (x, y), e in zip(q, elements) if e != "H"]
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400">' + "".join(lines) + "".join(dots)
                + "</svg>")


class DistanceBounds(_Record):
    """Lower and upper distance bounds (Å): `lower`, `upper` (N×N read-only views), `labels`
    (N atom labels), `atom_index` (N indices into the structure), `restraint` (N×N restraint ids,
    -1 for none; None when absent)."""

    _fields = ("lower", "upper", "labels", "atom_index", "restraint")


class TriMesh(_Record):
    """A triangle mesh: `vertices` (N×3), `faces` (F×3 vertex indices, uint32), `boundary` (a list
    of loops of vertex indices), `uv` (N×2 texture coordinates, one (u, v) per vertex, as
    circlepack.flatten gives them; None when the mesh has none). Arrays are read-only views."""

    _fields = ("vertices", "faces", "boundary", "uv")


class CirclePacking(_Record):
    """A circle packing: `radii` (N), `centres` (N×2), `faces` (F×3), `boundary` (N, 1 on the
    boundary), `geometry` ('euclidean' or 'hyperbolic'). Arrays are read-only views."""

    _fields = ("geometry", "radii", "centres", "faces", "boundary")


_RECORDS = {"Signal": Signal, "Scores": Scores, "Structure": Structure, "DistanceBounds": DistanceBounds,
            "TriMesh": TriMesh, "CirclePacking": CirclePacking}


def _pandas():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def to_python(data: Data, pandas: Optional[bool] = None):
    """The Python form of a Gemflow value: a NumPy array for a Matrix, an `Image` (H×W×4 array),
    a `Table` (records; a pandas DataFrame when pandas is present and `pandas` is not False), a
    `Segmentation`, and a record class for Signal, Scores, Structure, DistanceBounds, TriMesh and
    CirclePacking. Types without a Python form stay a `Data` (they can be passed on to nodes)."""
    plain = _gemflow.to_python(data)
    t = data.type
    if t.startswith("Matrix<"):
        return plain
    if t == "Image":
        im = plain.view(Image)
        im._gemflow_data = data
        return im
    if t == "Table":
        cols = plain["columns"]
        pd = _pandas() if pandas is not False else None
        if pd is not None:
            df = pd.DataFrame(plain["rows"], columns=cols)
            df.attrs["gemflow_type"] = "Table"
            return df
        return Table([dict(zip(cols, r)) for r in plain["rows"]], cols, data)
    if t == "Segmentation":
        return Segmentation(plain["segments"], plain["length"], plain["labels"], plain["sample_rate"], data)
    cls = _RECORDS.get(t)
    if cls is not None:
        return cls(data, **plain)
    return plain


def to_gemflow(type_name: str, obj: Any, what: str = "value") -> Data:
    """Converts a Python object into a Gemflow value of data type `type_name` (what node inputs
    do). Raises TypeError or ValueError naming `what` and the expected shape."""
    return _gemflow.from_python(type_name, obj, what)


# ---- Plugins and node types -----------------------------------------------------------------


def nodes() -> List[str]:
    """Every node type id of the loaded plugins, sorted."""
    return list(_gemflow.node_ids())


def plugins() -> List[dict]:
    """The plugin files found (file, name, version, loaded, error, nodes)."""
    return list(_gemflow.plugins())


def load_plugins(folder: os.PathLike | str) -> None:
    """Loads the plugins of another folder (an out-of-tree plugin's build folder). Raises
    GemflowError naming each file that did not load and why."""
    failed = _gemflow.load_plugins(os.fspath(folder))
    _node_cache.clear()
    if failed:
        raise GemflowError("plugins not loaded:\n" + "\n".join(failed))


def _limits(p: dict) -> str:
    parts = []
    if p["min"] is not None and p["max"] is not None:
        parts.append(f"range [{p['min']:g}, {p['max']:g}]")
    elif p["min"] is not None:
        parts.append(f"minimum {p['min']:g}")
    elif p["max"] is not None:
        parts.append(f"maximum {p['max']:g}")
    if p["choices"]:
        parts.append("choices: " + " | ".join(p["choices"]))
    if p["kind"] == "device":
        parts.append("auto | cpu | cuda | cuda:N")
    if p["extensions"]:
        parts.append("files: " + " | ".join(p["extensions"]))
    return ", ".join(parts)


def _docstring(spec: dict) -> str:
    lines = [f"{spec['id']} — {spec['title']} (version {spec['version']})", ""]
    if spec["doc"]:
        lines += [spec["doc"], ""]
    lines.append("Inputs (keyword arguments; NumPy arrays, gemflow values or the Python forms):")
    for p in spec["inputs"]:
        lines.append(f"    {p['name']}: {p['type']}{' (optional)' if p['optional'] else ''}")
        if p["doc"]:
            lines.append(f"        {p['doc']}")
    if not spec["inputs"]:
        lines.append("    (none)")
    lines.append("")
    lines.append("Parameters (keyword arguments):")
    for p in spec["params"]:
        unit = f", {p['unit']}" if p["unit"] else ""
        default = "required" if p["required"] else f"default {p['default']!r}"
        lim = _limits(p)
        lines.append(f"    {p['name']} ({p['kind']}{unit}): {default}{'; ' + lim if lim else ''}")
        if p["doc"]:
            lines.append(f"        {p['doc']}")
    if not spec["params"]:
        lines.append("    (none)")
    lines.append("")
    lines.append("Returns a dict of outputs:")
    for p in spec["outputs"]:
        lines.append(f"    {p['name']}: {p['type']}")
        if p["doc"]:
            lines.append(f"        {p['doc']}")
    for title in ("errors", "memory", "determinism", "references"):
        if spec[title]:
            lines += ["", f"{title.capitalize()}:", f"    {spec[title]}"]
    lines += ["", "Raises gemflow.NodeError with the node's message when it fails, TypeError or ValueError",
              "for an unknown argument, a value of the wrong type or shape, or a parameter out of its limits,",
              "KeyboardInterrupt when Ctrl-C cancelled it."]
    return "\n".join(lines)


def _make_node(type_id: str) -> Callable[..., Dict[str, Any]]:
    """The node type as a Python function (see node())."""
    spec = _gemflow.node_spec(type_id)
    input_names = {p["name"] for p in spec["inputs"]}
    call_node = _gemflow.call_node

    def run_node(out: os.PathLike | str = ".", raw: bool = False, **kwargs) -> Dict[str, Any]:
        inputs, params = {}, {}
        for k, v in kwargs.items():
            if k in input_names:
                inputs[k] = v
            else:
                params[k] = v  # unknown names are refused by call_node, with a hint
        outs, warnings = call_node(type_id, inputs, params, os.path.abspath(os.fspath(out)))
        if warnings:
            import warnings as w
            for text in warnings:
                w.warn(f"{type_id}: {text}", RuntimeWarning, stacklevel=2)
        if raw:
            return outs
        return {k: to_python(v) for k, v in outs.items()}

    params = []
    for p in spec["inputs"]:
        if p["name"].isidentifier() and not keyword.iskeyword(p["name"]):
            params.append(inspect.Parameter(p["name"], inspect.Parameter.KEYWORD_ONLY,
                                            default=None if p["optional"] else inspect.Parameter.empty,
                                            annotation=p["type"]))
    for p in spec["params"]:
        if p["name"].isidentifier() and not keyword.iskeyword(p["name"]) and p["name"] not in input_names:
            params.append(inspect.Parameter(p["name"], inspect.Parameter.KEYWORD_ONLY,
                                            default=inspect.Parameter.empty if p["required"] else p["default"]))
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default="."))
    params.append(inspect.Parameter("raw", inspect.Parameter.KEYWORD_ONLY, default=False))
    run_node.__signature__ = inspect.Signature(params, return_annotation=Dict[str, Any])
    run_node.__doc__ = _docstring(spec)
    run_node.__name__ = run_node.__qualname__ = type_id.rsplit(".", 1)[-1]
    run_node.__module__ = "gemflow.nodes"
    run_node.id = type_id
    run_node.spec = spec
    return run_node


_node_cache: Dict[str, Callable[..., Dict[str, Any]]] = {}


def node(type_id: str) -> Callable[..., Dict[str, Any]]:
    """The node type `type_id` as a function: call it with its inputs and parameters as keyword
    arguments; it returns a dict of its outputs (Python forms, see to_python). help() shows its
    ports, parameters, limits and docs; `.spec` is the spec as a dict. `out=` is the folder
    relative output paths resolve against (default: the current folder); relative input paths
    resolve against the current folder. `raw=True` returns the Gemflow values (`Data`). Raises
    ValueError for an unknown id, with the nearest one."""
    n = _node_cache.get(type_id)
    if n is None:
        n = _node_cache[type_id] = _make_node(type_id)
    return n


# ---- Workflows ------------------------------------------------------------------------------


def _yaml_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return str(v)


class Workflow:
    """A workflow: loaded from YAML (gemflow.load) or built in code, validated, run, saved.

        wf = gemflow.Workflow("spd")
        wf.add_node("read", "io.read_matrix", path="a.csv")
        wf.add_node("chol", "linalg.cholesky")
        wf.link("read.matrix", "chol.a")
        wf.save("spd.yaml")             # opens in Studio
    """

    def __init__(self, name: str = "", _impl=None):
        self._w = _impl if _impl is not None else _gemflow.Workflow(name)

    @property
    def name(self) -> str:
        return self._w.name

    @name.setter
    def name(self, value: str):
        self._w.name = value

    @property
    def description(self) -> str:
        return self._w.description

    @description.setter
    def description(self, value: str):
        self._w.description = value

    @property
    def file(self) -> str:
        """The file it was loaded from or last saved to ('' when none)."""
        return self._w.file

    @property
    def nodes(self) -> Dict[str, str]:
        """{node id: node type}, in file order."""
        return {i: self._w.node_type(i) for i in self._w.node_ids()}

    @property
    def links(self) -> List[str]:
        """Links as 'a.out -> b.in'."""
        return list(self._w.links())

    def params(self, node_id: str) -> dict:
        """The parameters a node sets (the others take their defaults)."""
        return self._w.params(node_id)

    def add_node(self, node_id: str, type_id: str, **params) -> "Workflow":
        """Adds a node of type `type_id` with parameters; returns the workflow (to chain)."""
        self._w.add_node(node_id, type_id)
        for k, v in params.items():
            self._w.set_param(node_id, k, v)
        return self

    def set(self, node_id: str, param: str, value: Any) -> "Workflow":
        """Sets a parameter; ValueError when it is unknown or the value is invalid."""
        self._w.set_param(node_id, param, value)
        return self

    def link(self, source: str, target: str) -> "Workflow":
        """Links output 'node.port' to input 'node.port'."""
        self._w.link(source, target)
        return self

    def validate(self) -> List[Diagnostic]:
        """Every problem `gemflow validate` finds, as Diagnostic objects (file, line, column,
        node, parameter, message, hint, severity); empty when the workflow is valid."""
        return list(self._w.validate())

    def to_yaml(self) -> str:
        return self._w.to_yaml()

    def save(self, path: os.PathLike | str) -> None:
        """Writes the workflow as YAML (atomically), in the form Studio and `gemflow run` read."""
        self._w.save(os.fspath(path))

    def run(self, set: Optional[Mapping[str, Any]] = None, device: str = "", out: Optional[os.PathLike | str] = None,
            cache: Any = None, progress: Any = None, until: str = "", jobs: int = 0,
            raw: bool = False) -> Dict[str, Any]:
        """Validates, then runs the workflow; returns {"node.port": value} for every output of
        every node (Python forms, see to_python; `raw=True`: Gemflow values).

        set: {"node.param": value} overrides, as `gemflow run --set`.
        device: "cpu", "auto", "cuda" or "cuda:N" for every node with a device parameter.
        out: output folder (default out/<workflow name>, as `gemflow run`).
        cache: None — the result cache of `gemflow run` (~/.cache/gemflow/results; none when
            GEMFLOW_NO_CACHE=1); a folder; False — none. Results of earlier runs of this
            Workflow object are reused in any case while their inputs are unchanged.
        progress: a callable given each RunEvent (kind, node, state, progress, message), or
            "tqdm" for a progress bar (tqdm.auto: a widget in notebooks).
        until: run only this node and what it depends on.

        Raises WorkflowError (with diagnostics) when the workflow is invalid, NodeError with
        the CLI's text when a node failed, KeyboardInterrupt after Ctrl-C stopped the run (the
        running nodes are cancelled and waited for; their files are not half-written)."""
        sets = [f"{k}={_yaml_text(v)}" for k, v in (set or {}).items()]
        use_cache = cache is not False
        if cache is None:
            env = os.environ.get("GEMFLOW_NO_CACHE", "")
            use_cache = not (env and env != "0")
        cache_dir = None if cache in (None, False, True) else os.fspath(cache)
        bar = None
        callback = progress
        if progress == "tqdm":
            bar, callback = _tqdm_progress(self)
        try:
            r = self._w.run({"sets": sets, "device": device, "out": None if out is None else os.fspath(out),
                             "cache": cache_dir, "use_cache": use_cache, "until": until, "jobs": jobs}, callback)
        finally:
            if bar is not None:
                bar.close()
        errors = [d for d in r["diagnostics"] if d.severity == "error"]
        if errors:
            raise WorkflowError(f"workflow '{self.name or self.file}' is invalid: nothing ran", r["diagnostics"])
        failed = [(i, n) for i, n in r["nodes"].items() if n["state"] == "failed"]
        if failed:
            raise NodeError("\n".join(n["error"] for _, n in failed))
        if r["cancelled"]:
            raise KeyboardInterrupt("the run was cancelled")
        if r.get("provenance_error"):
            raise GemflowError("the provenance record was not written: " + r["provenance_error"])
        results: Dict[str, Any] = {}
        for node_id, n in r["nodes"].items():
            for port, v in n["outputs"].items():
                results[f"{node_id}.{port}"] = v if raw else to_python(v)
        return results

    def __repr__(self):
        return f"<gemflow.Workflow '{self.name}' ({len(self._w.node_ids())} nodes, {len(self._w.links())} links)>"


def _tqdm_progress(wf: Workflow):
    from tqdm.auto import tqdm
    total = len(wf._w.node_ids())
    bar = tqdm(total=total, desc=wf.name or "workflow", unit="node")
    finished = {"done", "cached", "failed", "cancelled", "skipped"}

    def on_event(e: RunEvent):
        if e.kind == "state" and e.state in finished:
            bar.update(1)
            bar.set_postfix_str(f"{e.node} {e.state}")
        elif e.kind == "progress":
            bar.set_postfix_str(f"{e.node} {100 * e.progress:.0f}%")
    return bar, on_event


def load(path: os.PathLike | str) -> Workflow:
    """Reads a workflow file. Raises WorkflowError (with diagnostics) when the file cannot be
    read into a workflow (YAML syntax, format version); problems that validate() reports (an
    unknown parameter value, a missing link) do not stop loading."""
    w, diags = _gemflow.Workflow.load(os.fspath(path))
    if w is None:
        raise WorkflowError(f"{os.fspath(path)}: cannot be loaded", diags)
    return Workflow(_impl=w)
