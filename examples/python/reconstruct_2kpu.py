# %% [markdown]
# # Distance geometry from Python: reconstruct 2KPU from its own short distances
#
# A notebook-style script (each `# %%` is a cell in Jupyter or VS Code). It reads model 1 of the
# NMR structure 2KPU, keeps only the distances under 5 Å as ±0.05 Å bounds, smooths them, embeds
# and refines, and compares the result with the model. Then it builds the same chain as a
# workflow in code, saves it as YAML (Studio opens it) and runs it.
#
#   PYTHONPATH=build/ci/python python3 examples/python/reconstruct_2kpu.py
#
# (after `apt install ./gemflow_*.deb`: plain `python3 examples/python/reconstruct_2kpu.py`).

# %%
import os
import pathlib
import tempfile

import numpy as np

import gemflow

here = pathlib.Path(__file__).resolve().parent
root = pathlib.Path(os.environ.get("GEMFLOW_SOURCE_DIR", here.parent.parent))
pdb = root / "sample_data" / "2kpu" / "2kpu.pdb"
out = pathlib.Path(os.environ.get("EXAMPLE_OUT", tempfile.mkdtemp(prefix="gemflow-example-")))

# %% Each node is a function; help() shows its ports, parameters, limits and documentation.
read = gemflow.node("io.read_structure")
bounds_from_structure = gemflow.node("distgeom.bounds_from_structure")
smooth = gemflow.node("distgeom.triangle_smoothing")
dg = gemflow.node("distgeom.embed_and_refine")
compare = gemflow.node("distgeom.compare")

# %% Read the model: coordinates as a NumPy array, atoms as records.
model = read(path=pdb, model=1)["structure"]
print(model, model.coordinates.shape, model.atoms[0])

# %% Bounds: two N×N NumPy arrays (views of the node's result, no copy) and the atom labels.
bounds = bounds_from_structure(structure=model, cutoff=5.0, tolerance=0.05, hydrogens=False)["bounds"]
n = len(bounds.labels)
known = np.count_nonzero(np.triu(bounds.upper < 5.1, 1))
print(f"{n} atoms, {known} pairs known to ±0.05 Å of {n * (n - 1) // 2}")

# %% Smoothing tightens the bounds to their triangle-inequality closure.
smoothed = smooth(bounds=bounds, device="cpu")["bounds"]
print("upper bounds tightened by up to", float(np.max(bounds.upper - smoothed.upper)), "Å")

# %% Embed (4D, pivoted Cholesky of the exact metric matrix) and refine, then compare with the model.
result = dg(bounds=bounds, smoothed=smoothed, structure=model, trials=1, seed=1, metrize="none",
            method="cholesky", dimensions=4, max_iterations=10000, mirror_trial=True, device="cpu")
report = compare(model=result["structure"], reference=model)["report"]
print(report)  # a pandas DataFrame when pandas is installed, else a gemflow.Table of records

# %% The same chain as a workflow built in code, saved as YAML and run.
wf = gemflow.Workflow("reconstruct-2kpu")
wf.add_node("read", "io.read_structure", path=str(pdb), model=1)
wf.add_node("bounds", "distgeom.bounds_from_structure", cutoff=5.0, tolerance=0.05, hydrogens=False)
wf.add_node("smooth", "distgeom.triangle_smoothing", device="cpu")
wf.add_node("dg", "distgeom.embed_and_refine", trials=1, seed=1, metrize="none", dimensions=4,
            max_iterations=10000, mirror_trial=True, device="cpu")
wf.add_node("compare", "distgeom.compare")
wf.link("read.structure", "bounds.structure")
wf.link("bounds.bounds", "smooth.bounds")
wf.link("smooth.bounds", "dg.smoothed")
wf.link("bounds.bounds", "dg.bounds")
wf.link("read.structure", "dg.structure")
wf.link("dg.structure", "compare.model")
wf.link("read.structure", "compare.reference")
assert wf.validate() == [], wf.validate()
wf.save(out / "reconstruct.yaml")

# %% Run it up to the smoothing (`until`), with a progress callback (progress="tqdm": a bar).
states = []
results = gemflow.load(out / "reconstruct.yaml").run(out=out / "run", cache=False, until="smooth",
                                                     progress=lambda e: states.append((e.node, e.state)))
print(sorted(results))
assert np.array_equal(results["smooth.bounds"].upper, smoothed.upper)
