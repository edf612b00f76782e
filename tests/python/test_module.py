"""Tests of the gemflow Python module, through the testnodes plugin (tests/plugins) and the
in-tree io plugin. Run by CTest (tests/python/CMakeLists.txt) with PYTHONPATH=<build>/python and
GEMFLOW_PLUGIN_PATH=<build>/test-plugins/testnodes."""

import inspect
import os
import pydoc
import signal
import threading
import time

import numpy as np
import pytest

import gemflow


def interrupt_after(seconds):
    """Sends SIGINT to this process after `seconds`, as Ctrl-C in a terminal or Jupyter's stop."""
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


# ---- node calls -----------------------------------------------------------------------------


def test_node_call_returns_arrays_and_results_are_read_only_views():
    out = gemflow.node("test.add")(a=np.array([[1.0, 2.0]]), b=np.array([[10.0, 20.0]]))
    s = out["sum"]
    assert isinstance(s, np.ndarray) and s.dtype == np.float64
    np.testing.assert_array_equal(s, [[11.0, 22.0]])
    with pytest.raises(ValueError):
        s[0, 0] = 5.0  # a view of the node's result, which is immutable


def test_a_result_passed_back_is_not_copied_and_a_fresh_array_is():
    m = gemflow.node("test.constant")(value=3.0)["value"]
    again = gemflow.to_python(gemflow.to_gemflow("Matrix<f64>", m))
    assert np.shares_memory(again, m)  # the same Gemflow value, no conversion
    fresh = np.ones((2, 2))
    assert not np.shares_memory(gemflow.to_python(gemflow.to_gemflow("Matrix<f64>", fresh)), fresh)
    # a slice of a result is a different matrix: converted, with its own values
    big = gemflow.node("test.add")(a=np.arange(6.0).reshape(2, 3), b=np.zeros((2, 3)))["sum"]
    np.testing.assert_array_equal(gemflow.to_python(gemflow.to_gemflow("Matrix<f64>", big[:, 1:])), [[1, 2], [4, 5]])


def test_other_dtypes_and_non_contiguous_arrays_are_converted():
    a = np.arange(12, dtype=np.int32).reshape(3, 4).T  # transposed: not C-contiguous, integers
    out = gemflow.node("test.add")(a=a, b=np.zeros((4, 3), dtype=np.float32))["sum"]
    np.testing.assert_array_equal(out, a.astype(float))


def test_wrong_shape_or_type_names_the_port_and_the_expected_shape():
    add = gemflow.node("test.add")
    with pytest.raises(ValueError, match=r"test.add: input 'a': expected a 2-D array \(rows × cols\) of float64, got an array of shape \(3,\)"):
        add(a=np.zeros(3), b=np.zeros((1, 3)))
    with pytest.raises(TypeError, match=r"input 'b': expected a 2-D array .* got an array of dtype complex128"):
        add(a=np.zeros((1, 1)), b=np.zeros((1, 1), dtype=complex))
    with pytest.raises(TypeError, match=r"input 'a': expected .* got str"):
        add(a="text", b=np.zeros((1, 1)))
    with pytest.raises(TypeError, match=r"input 'a' \(Matrix<f64>\) is required"):
        add(b=np.zeros((1, 1)))


def test_parameters_are_checked_against_their_limits_and_names():
    sleep = gemflow.node("test.sleep")
    with pytest.raises(ValueError, match=r"test.sleep: parameter 'seconds': -1 is below the minimum 0 s"):
        sleep(seconds=-1)
    with pytest.raises(TypeError, match=r"no parameter or input 'secnds' \(did you mean 'seconds'\?\)"):
        sleep(secnds=1)
    with pytest.raises(ValueError, match=r"unknown node type 'test.ad' \(did you mean 'test.add'\?\)"):
        gemflow.node("test.ad")


def test_node_failure_raises_node_error_with_the_nodes_text():
    with pytest.raises(gemflow.NodeError, match=r"^test.fail: boom$"):
        gemflow.node("test.fail")(message="boom")
    with pytest.raises(gemflow.NodeError, match=r"shapes differ: 1×2 and 2×1"):
        gemflow.node("test.add")(a=np.zeros((1, 2)), b=np.zeros((2, 1)))


def test_help_shows_ports_parameters_limits_and_docs():
    sleep = gemflow.node("test.sleep")
    doc = sleep.__doc__
    assert doc.startswith("test.sleep — Sleep (version 1)")
    assert "seconds (float, s): default 1.0; range [0, 3600]" in doc
    assert "    in: Matrix<f64> (optional)" in doc
    assert "    out: Matrix<f64>" in doc
    sig = inspect.signature(sleep)
    assert sig.parameters["seconds"].default == 1.0
    assert "in" not in sig.parameters  # a Python keyword: passed as **{"in": x}, still documented
    shown = pydoc.render_doc(sleep, renderer=pydoc.plaintext)  # what help() prints
    assert "sleep(*, seconds=1.0, cooperative=True" in shown
    assert "seconds (float, s): default 1.0; range [0, 3600]" in shown


@pytest.mark.parametrize("on_worker", [False, True])
def test_ctrl_c_cancels_a_node_call(on_worker):
    # on_worker: the node checks cancellation only on a thread of its own, where Python does not
    # look for signals
    timer = interrupt_after(0.3)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        gemflow.node("test.sleep")(seconds=30, on_worker=on_worker)
    timer.join()
    assert time.monotonic() - t0 < 5


# ---- workflows ------------------------------------------------------------------------------


def two_constants(name="sum"):
    wf = gemflow.Workflow(name)
    wf.add_node("a", "test.constant", value=2.0)
    wf.add_node("b", "test.constant", value=3)
    wf.add_node("add", "test.add")
    wf.link("a.value", "add.a").link("b.value", "add.b")
    return wf


def test_build_run_save_and_load_a_workflow(tmp_path):
    wf = two_constants()
    assert wf.validate() == []
    out = wf.run(out=tmp_path / "out", cache=False)
    np.testing.assert_array_equal(out["add.sum"], [[5.0]])
    assert (tmp_path / "out" / "provenance.json").exists()
    out = wf.run(set={"b.value": 10}, out=tmp_path / "out", cache=False)
    np.testing.assert_array_equal(out["add.sum"], [[12.0]])
    wf.save(tmp_path / "w.yaml")
    again = gemflow.load(tmp_path / "w.yaml")
    assert again.to_yaml() == wf.to_yaml()
    assert again.nodes == {"a": "test.constant", "b": "test.constant", "add": "test.add"}
    assert again.links == ["a.value -> add.a", "b.value -> add.b"]
    assert again.params("b") == {"value": 3.0}


def test_editing_refuses_unknown_names_and_bad_values():
    wf = gemflow.Workflow("w")
    wf.add_node("s", "test.sleep")
    with pytest.raises(ValueError, match=r"node 's', parameter 'seconds': 4000 is above the maximum 3600 s"):
        wf.set("s", "seconds", 4000)
    with pytest.raises(ValueError, match=r"did you mean 'seconds'"):
        wf.set("s", "second", 1)
    with pytest.raises(ValueError, match=r"test.sleep has no output .result. \(outputs: out\)"):
        wf.link("s.result", "s.in")
    with pytest.raises(ValueError, match=r"has a node 's' already"):
        wf.add_node("s", "test.add")


def test_validate_gives_diagnostic_objects_with_file_line_node_and_parameter(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("gemflow: 1\nname: bad\nnodes:\n  s: {type: test.sleep, params: {seconds: -4}}\n")
    wf = gemflow.load(f)
    ds = wf.validate()
    assert len(ds) == 1
    d = ds[0]
    assert (d.severity, d.file, d.line, d.node, d.parameter) == ("error", str(f), 4, "s", "seconds")
    assert "below the minimum" in d.message
    assert str(d).startswith(f"{f}:4:")
    with pytest.raises(gemflow.WorkflowError) as e:
        wf.run(out=tmp_path / "o", cache=False)
    assert e.value.diagnostics[0].parameter == "seconds"
    assert "nothing ran" in str(e.value)
    # an input that no link feeds
    wf = gemflow.Workflow("w")
    wf.add_node("add", "test.add")
    assert {(d.node, d.parameter, d.is_port) for d in wf.validate()} == {("add", "a", True), ("add", "b", True)}


def test_unreadable_file_raises_workflow_error(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("gemflow: 1\nnodes: [\n")
    with pytest.raises(gemflow.WorkflowError, match="cannot be loaded"):
        gemflow.load(f)


def test_a_failed_node_raises_node_error_with_the_cli_text(tmp_path):
    wf = gemflow.Workflow("f")
    wf.add_node("f", "test.fail", message="it broke")
    with pytest.raises(gemflow.NodeError, match=r"node 'f' \(test.fail\): it broke"):
        wf.run(out=tmp_path, cache=False)


def test_progress_callback_sees_states_and_its_exception_stops_the_run(tmp_path):
    events = []
    two_constants().run(out=tmp_path, cache=False, progress=events.append)
    assert ("add", "done") in {(e.node, e.state) for e in events if e.kind == "state"}

    def stop(e):
        raise RuntimeError("enough")
    wf = gemflow.Workflow("slow")
    wf.add_node("s", "test.sleep", seconds=30)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        wf.run(out=tmp_path / "s", cache=False, progress=stop)
    assert time.monotonic() - t0 < 5


def test_ctrl_c_cancels_a_run_and_waits_for_the_nodes(tmp_path):
    wf = gemflow.Workflow("slow")
    wf.add_node("s", "test.sleep", seconds=30)
    wf.add_node("w", "test.write_text", path="late.txt")
    wf.link("s.out", "w.value")
    timer = interrupt_after(0.3)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        wf.run(out=tmp_path, cache=False)
    timer.join()
    assert time.monotonic() - t0 < 5
    assert not (tmp_path / "late.txt").exists()  # nothing downstream of the cancelled node ran
    # the module still works afterwards
    np.testing.assert_array_equal(two_constants().run(out=tmp_path / "2", cache=False)["add.sum"], [[5.0]])


# ---- conversions ----------------------------------------------------------------------------


def test_distance_bounds_round_trip_and_shape_errors():
    lower = np.array([[0, 1.0], [1.0, 0]])
    upper = np.array([[0, 2.0], [2.0, 0]])
    d = gemflow.to_gemflow("DistanceBounds", {"lower": lower, "upper": upper, "labels": ["A:1:CA", "A:2:CA"]})
    b = gemflow.to_python(d)
    assert isinstance(b, gemflow.DistanceBounds)
    np.testing.assert_array_equal(b.upper, upper)
    assert b.labels == ["A:1:CA", "A:2:CA"] and list(b.atom_index) == [0, 1] and b.restraint is None
    assert gemflow.to_gemflow("DistanceBounds", b) is not None
    with pytest.raises(ValueError, match=r"bounds: 'lower' and 'upper' must be N×N arrays of the same N, got 2×2 and 3×3"):
        gemflow.to_gemflow("DistanceBounds", {"lower": lower, "upper": np.zeros((3, 3))}, "bounds")
    with pytest.raises(TypeError, match=r"x: expected DistanceBounds .* got list without 'lower'"):
        gemflow.to_gemflow("DistanceBounds", [1, 2], "x")


def test_image_is_an_hxwx4_array_shown_as_png():
    px = np.zeros((2, 3, 4), dtype=np.uint8)
    px[..., 0] = 255
    px[..., 3] = 255
    im = gemflow.to_python(gemflow.to_gemflow("Image", px))
    assert isinstance(im, gemflow.Image) and im.shape == (2, 3, 4) and im.dtype == np.uint8
    np.testing.assert_array_equal(im, px)
    png = im._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError, match=r"expected an H×W×4 array .* got an array of shape \(2, 3\)"):
        gemflow.to_gemflow("Image", np.zeros((2, 3), dtype=np.float32))


def test_table_as_records_or_dataframe():
    d = gemflow.to_gemflow("Table", [{"atom": "CA", "rmsd": 0.5, "n": 3}, {"atom": "CB", "rmsd": 1.5, "n": 4}])
    t = gemflow.to_python(d, pandas=False)
    assert isinstance(t, gemflow.Table)
    assert t.columns == ["atom", "rmsd", "n"] and t[1] == {"atom": "CB", "rmsd": 1.5, "n": 4}
    assert "<td>CB</td>" in t._repr_html_()
    with pytest.raises(ValueError, match=r"record 1 has no 'rmsd'"):
        gemflow.to_gemflow("Table", [{"atom": "CA", "rmsd": 0.5}, {"atom": "CB"}])


def test_segmentation_signal_scores_mesh_structure():
    seg = gemflow.to_python(gemflow.to_gemflow(
        "Segmentation", {"length": 10, "labels": ["a", "b"], "segments": [
            {"start": 0, "end": 4, "label": "a", "score": 1.0}, {"start": 4, "end": 10, "label": "b", "score": 2.0}]}))
    assert isinstance(seg, gemflow.Segmentation) and seg[1]["label"] == "b" and seg.length == 10
    assert "2 segments over 10 samples" in seg._repr_html_()

    sig = gemflow.to_python(gemflow.to_gemflow("Signal", np.arange(5.0)))
    assert sig.samples.shape == (5, 1) and np.asarray(sig).shape == (5, 1)

    sc = gemflow.to_python(gemflow.to_gemflow("Scores", {"scores": np.zeros((4, 3)), "labels": ["x", "y", "z"]}))
    assert sc.scores.shape == (4, 3) and sc.labels == ["x", "y", "z"]

    mesh = gemflow.to_python(gemflow.to_gemflow("TriMesh", {
        "vertices": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]), "faces": np.array([[0, 1, 2]])}))
    assert mesh.faces.dtype == np.uint32 and len(mesh.boundary) == 1 and sorted(mesh.boundary[0]) == [0, 1, 2]
    assert mesh.uv is None

    # UVs (one (u, v) per vertex) go both ways, as read-only views; a wrong count names the rule
    uv = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.5]])
    textured = gemflow.to_python(gemflow.to_gemflow("TriMesh", {
        "vertices": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]), "faces": np.array([[0, 1, 2]]), "uv": uv}))
    assert textured.uv.shape == (3, 2) and np.array_equal(textured.uv, uv) and not textured.uv.flags.writeable
    again = gemflow.to_python(gemflow.to_gemflow("TriMesh", textured))
    assert np.array_equal(again.uv, uv)
    with pytest.raises(ValueError, match="uv"):
        gemflow.to_gemflow("TriMesh", {"vertices": np.zeros((3, 3)) + np.eye(3), "faces": np.array([[0, 1, 2]]),
                                       "uv": uv[:2]})

    atoms = [{"name": "CA", "element": "C", "residue": "ALA", "residue_number": i + 1, "chain": "A"} for i in range(3)]
    st = gemflow.to_python(gemflow.to_gemflow("Structure", {"atoms": atoms, "coordinates": np.eye(3)}))
    assert st.coordinates.shape == (1, 3, 3) and st.atoms[2]["residue_number"] == 3
    assert st._repr_svg_().startswith("<svg")
    with pytest.raises(ValueError, match=r"coordinates of shape \(models, 3, 3\) or \(3, 3\), got an array of shape \(1, 2, 3\)"):
        gemflow.to_gemflow("Structure", {"atoms": atoms, "coordinates": np.zeros((2, 3))})


def test_a_second_run_of_the_same_workflow_reuses_unchanged_results(tmp_path):
    wf = two_constants()
    wf.run(out=tmp_path, cache=False)
    states = {}
    out = wf.run(set={"b.value": 4}, out=tmp_path, cache=False,
                 progress=lambda e: states.__setitem__(e.node, e.state) if e.kind == "state" else None)
    np.testing.assert_array_equal(out["add.sum"], [[6.0]])
    assert states["a"] == "cached" and states["b"] == "done" and states["add"] == "done"


def test_progress_tqdm_drives_a_bar(tmp_path, monkeypatch):
    import sys
    import types
    bars = []

    class FakeBar:
        def __init__(self, total, desc, unit):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, s):
            pass

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    two_constants().run(out=tmp_path, cache=False, progress="tqdm")
    assert len(bars) == 1 and bars[0].total == 3 and bars[0].n == 3 and bars[0].closed
