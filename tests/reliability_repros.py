#!/usr/bin/env python3
"""Runs every reproducer of ../shared/repro/reliability/ (issue 34) and prints one table row per
case: exit status, wall and CPU time (user + system of the command: what counts on a loaded
machine), and the first error line, with whether it is located (names a file and line of the
input, or the output file or folder where there is no input line) and under a second of CPU.
Not part of `make test` (the reproducers live outside the repository; their inputs are replayed
there as regression inputs).

Usage: tests/reliability_repros.py [GEMFLOW] [REPRO_DIR]
  GEMFLOW    the command (default build/ci/bin/gemflow)
  REPRO_DIR  default ../shared/repro/reliability

Each folder's workflow (wf.yaml, or each *.yaml beside the inputs) is run with
`gemflow run WF --out TMP --json -j 1` under a 10 s timeout, from inside the folder as its
cmd.sh does. concurrent_output_folder: two runs into one folder at once, the second must be
refused. manual_full_disk_report_json: as root, a 64 KiB tmpfs is mounted, filled after a first run,
and the second run must fail and leave report.json as it was (skipped when not root). The review's
2.1M-entry `editor:` section (no folder) is generated and validated.
"""
import glob
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

gemflow = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/ci/bin/gemflow")
repro = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "../shared/repro/reliability")
located = re.compile(r"[\w./-]+\.\w+:\d+")  # file.ext:line
# a writer's or the lock's error has no input line: the output file, or the folder, is its place
named = re.compile(r"[\w./-]+\.\w+: |[\w./-]+\.\w+(?: \(|$)|/[\w./-]+: No space|lock file /")


def first_error(text):
    for line in text.splitlines():  # a diagnostic first, then any line that says what failed
        if re.search(r"\berror:", line):
            return line.strip()
    for line in text.splitlines():
        if re.search(r"\berror\b|refused|failed|cannot|not read|out of memory", line, re.I):
            return line.strip()
    return ""


def children_cpu():
    """CPU seconds (user + system) of the child processes waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args, cwd, timeout=10):
    """(exit status, (wall s, CPU s), output): CPU is what counts on a loaded machine."""
    c0 = children_cpu()
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.stdout or b"").decode() + (e.stderr or b"").decode()
    return rc, (time.monotonic() - t0, children_cpu() - c0), out


def full_disk(folder):
    """As its cmd.sh: a first run writes report.json into a 64 KiB tmpfs, a filler takes the rest,
    the second run must fail with the file named and leave the first run's report.json as it was."""
    wf = "rep.yaml (disk full)"
    if os.geteuid() != 0:
        return ("manual_full_disk_report_json", wf, "skipped", (0.0, 0.0), "needs a tmpfs mount (root): run its cmd.sh")
    mnt = tempfile.mkdtemp(prefix="gemflow-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]).returncode != 0:
        os.rmdir(mnt)
        return ("manual_full_disk_report_json", wf, "skipped", (0.0, 0.0), "mount -t tmpfs failed: run its cmd.sh")
    try:
        env = dict(os.environ, GEMFLOW_NO_CACHE="1")
        args = [gemflow, "run", "rep.yaml", "--device", "cpu", "--out", mnt, "-j", "1"]
        subprocess.run(args, cwd=folder, capture_output=True, env=env, timeout=10)
        report = os.path.join(mnt, "report.json")
        before = open(report, "rb").read() if os.path.exists(report) else None
        st = os.statvfs(mnt)
        with open(os.path.join(mnt, "filler"), "wb") as f:
            try:
                f.write(b"\0" * (st.f_bavail * st.f_frsize))
            except OSError:
                pass  # full
        c0, t0 = children_cpu(), time.monotonic()
        p = subprocess.run(args, cwd=folder, capture_output=True, text=True, env=env, timeout=10)
        secs = (time.monotonic() - t0, children_cpu() - c0)
        after = open(report, "rb").read() if os.path.exists(report) else None
        err = first_error(p.stdout + p.stderr)
        if before is None or after != before:
            err = "REPORT.JSON LOST OR CHANGED; " + err
        return ("manual_full_disk_report_json", wf, p.returncode, secs, err)
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)


rows = []
out_root = tempfile.mkdtemp(prefix="gemflow-repro-")
for d in sorted(os.listdir(repro)):
    folder = os.path.join(repro, d)
    if not os.path.isdir(folder) or d in ("inputs", "large"):
        continue
    if d == "concurrent_output_folder":
        # its inputs (../inputs/csv/plain.csv, spd.csv) are not in the folder: a 2003×2003 sample matrix
        # (sample_data/spd/bcsstk13.mtx) written as CSV takes its place, so that A runs a while
        work = os.path.join(out_root, "conc", d)
        os.makedirs(os.path.join(out_root, "conc", "inputs", "csv"))
        for y in ("many_A.yaml", "many_B.yaml"):
            os.makedirs(work, exist_ok=True)
            with open(os.path.join(folder, y)) as f, open(os.path.join(work, y), "w") as g:
                g.write(f.read())
        mtx = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "sample_data", "spd", "bcsstk13.mtx"))
        convert = os.path.join(out_root, "conc", "convert.yaml")
        with open(convert, "w") as g:
            g.write("gemflow: 1\nnodes:\n  r: {type: io.read_matrix, params: {path: %s}}\n"
                    "  w: {type: io.write_matrix, params: {path: spd.csv}}\nlinks:\n  - r.matrix -> w.matrix\n" % mtx)
        csv = os.path.join(out_root, "conc", "inputs", "csv")
        subprocess.run([gemflow, "run", convert, "--out", csv], capture_output=True, check=True)
        os.link(os.path.join(csv, "spd.csv"), os.path.join(csv, "plain.csv"))  # A reads plain.csv
        out = os.path.join(out_root, d)
        a = subprocess.Popen([gemflow, "run", "many_A.yaml", "--out", out, "-j", "1"], cwd=work,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        rc, secs, text = run([gemflow, "run", "many_B.yaml", "--out", out, "-j", "1"], work)
        a.wait()
        rows.append((d, "many_B.yaml (while A runs)", rc, secs, first_error(text)))
        continue
    if d == "manual_full_disk_report_json":
        rows.append(full_disk(folder))
        continue
    wfs = [os.path.join(folder, "wf.yaml")] if os.path.exists(os.path.join(folder, "wf.yaml")) else \
        sorted(glob.glob(os.path.join(folder, "*.yaml")))
    for wf in wfs:
        args = [gemflow, "validate" if d.startswith("asan_yaml") else "run", wf]
        if args[1] == "run":
            args += ["--out", os.path.join(out_root, d), "--json", "-j", "1"]
        rc, secs, text = run(args, folder)
        rows.append((d, os.path.basename(wf), rc, secs, first_error(text)))

# The 2.1M-entry editor: section of the review (no folder: 65 MB), generated.
big = os.path.join(out_root, "editor_2100000.yaml")
with open(big, "w") as f:
    f.write("gemflow: 1\nname: e\nnodes:\n  a: {type: io.read_matrix, params: {path: x.mtx}}\neditor:\n")
    f.writelines(f"  n{i}: {{pos: [{i}, 2]}}\n" for i in range(2100000))
rc, secs, text = run([gemflow, "validate", big], out_root)
rows.append(("(generated) editor: of 2.1M entries", "editor_2100000.yaml", rc, secs, first_error(text)))
os.remove(big)

print("| reproducer | workflow | exit | wall s | CPU s | located | first error line |")
print("|---|---|---:|---:|---:|---|---|")
slow = unlocated = 0
for d, wf, rc, secs, err in rows:
    loc = "yes" if located.search(err) else ("-" if not err else "file" if named.search(err) else "no")
    slow += secs[1] >= 1.0 and rc != "skipped"
    unlocated += loc == "no"
    print(f"| {d} | {wf} | {rc} | {secs[0]:.2f} | {secs[1]:.2f} | {loc} | {err.replace('|', '/')[:160]} |")
print(f"\n{len(rows)} cases; {slow} took 1 s of CPU or more; {unlocated} errors naming no place "
      "(yes: file:line of the input; file: an output file or folder, which has no line)")
