#!/usr/bin/env bash
# tests/package/package_test.sh BUILD_DIR SOURCE_DIR — see CMakeLists.txt beside it.
# Exit 0: passed; 77: skipped (not root, or a gemflow package is installed already); else failed.
set -euo pipefail
build=$1
src=$2

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*" >&2; exit 1; }
step() { echo "== $(date +%T) $*"; }

[ "$(id -u)" -eq 0 ] || skip "the package test installs gemflow into /usr with apt-get: it runs as root only (CI does)"
command -v apt-get >/dev/null || skip "no apt-get: not a Debian system"
if dpkg-query -W -f='${Status}' gemflow 2>/dev/null | grep -q "install ok installed"; then
  skip "a gemflow package is installed on this machine already; the test would replace and then remove it"
fi
for tool in cpack dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || fail "$tool is missing (packaging/debian-packages.txt lists what the package needs)"
done

work=$(mktemp -d /tmp/gemflow-package-test.XXXXXX)
installed=0
cleanup() {
  if [ "$installed" -eq 1 ]; then
    rm -f /usr/lib/gemflow/plugins/libgemflow_example.so
    DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -qq gemflow >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# nothing of the user's: no result cache, no plugin probe memory, no Python byte code elsewhere
export XDG_CACHE_HOME=$work/cache GEMFLOW_NO_CACHE=1
unset GEMFLOW_PLUGIN_PATH PYTHONPATH

step "cpack -G DEB"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/pkg/gemflow_*.deb)
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'

step "apt-get install $deb"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "$deb" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install failed"; }
installed=1
dpkg -L gemflow | sort >"$work/files"
for f in /usr/bin/gemflow /usr/lib/gemflow/plugins/libgemflow_distgeom.so /usr/include/gemflow/node.hpp \
         /usr/lib/cmake/Gemflow/GemflowConfig.cmake /usr/lib/python3/dist-packages/gemflow/__init__.py \
         /usr/share/man/man1/gemflow.1.gz /usr/share/gemflow/workflows/spd_solve.yaml \
         /usr/share/doc/gemflow/nodes/README.md; do
  grep -qx "$f" "$work/files" || fail "the package has no $f"
done
if [ -x /usr/bin/gemflow-studio ]; then
  grep -qx /usr/share/applications/gemflow-studio.desktop "$work/files" || fail "Studio without its desktop entry"
  grep -qx /usr/share/icons/hicolor/scalable/apps/gemflow.svg "$work/files" || fail "Studio without its icon"
fi

step "gemflow run of an installed workflow"
cd "$work"
/usr/bin/gemflow plugins | tail -1
/usr/bin/gemflow run /usr/share/gemflow/workflows/spd_solve.yaml --out "$work/out" --device cpu ||
  fail "gemflow run /usr/share/gemflow/workflows/spd_solve.yaml failed"
[ -s "$work/out/report.json" ] && [ -s "$work/out/provenance.json" ] || fail "the run wrote no report.json or provenance.json"

step "examples/external_plugin against the installed SDK"
cmake -S "$src/examples/external_plugin" -B "$work/ext" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DEXAMPLE_NO_CUDA=ON -DCMAKE_INSTALL_PREFIX=/usr >"$work/ext.log" 2>&1 || { cat "$work/ext.log"; fail "cmake of the example plugin"; }
grep -q "^Gemflow_DIR:PATH=/usr/lib/cmake/Gemflow$" "$work/ext/CMakeCache.txt" ||
  fail "the example found another Gemflow: $(grep ^Gemflow_DIR "$work/ext/CMakeCache.txt")"
cmake --build "$work/ext" >>"$work/ext.log" 2>&1 || { cat "$work/ext.log"; fail "build of the example plugin"; }
cmake --install "$work/ext" >>"$work/ext.log" 2>&1 || { cat "$work/ext.log"; fail "install of the example plugin"; }
/usr/bin/gemflow nodes example.scale >/dev/null || fail "the installed gemflow does not find the installed example plugin"

step "the installed Python module"
/usr/bin/python3 - <<'PY' || fail "the installed Python module"
import numpy as np
import gemflow
assert gemflow.__file__ == "/usr/lib/python3/dist-packages/gemflow/__init__.py", gemflow.__file__
m = gemflow.node("io.read_matrix")(path="/usr/share/gemflow/sample_data/spd/bcsstk13.mtx")["matrix"]
assert m.shape == (2003, 2003), m.shape
out = gemflow.node("example.scale")(matrix=np.eye(2), factor=3.0)
print("python:", gemflow.__version__, len(gemflow.nodes()), "node types; example.scale ->", out["scaled"].tolist())
assert out["scaled"].tolist() == [[3.0, 0.0], [0.0, 3.0]]
PY

step "reinstall over itself (an upgrade's unpack) keeps files the package does not own"
apt-get install -y -qq --reinstall "$deb" >"$work/apt2.log" 2>&1 || { cat "$work/apt2.log"; fail "reinstall failed"; }
[ -f /usr/lib/gemflow/plugins/libgemflow_example.so ] || fail "the reinstall removed a plugin the user installed"
rm -f /usr/lib/gemflow/plugins/libgemflow_example.so

step "apt-get remove --purge"
apt-get remove --purge -y -qq gemflow >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "remove failed"; }
installed=0
left=()
while read -r f; do
  if [ -e "$f" ] && [ ! -d "$f" ]; then left+=("$f"); fi
done <"$work/files"
for d in /usr/lib/gemflow /usr/include/gemflow /usr/lib/cmake/Gemflow /usr/share/gemflow /usr/share/doc/gemflow \
         /usr/lib/python3/dist-packages/gemflow; do
  [ -e "$d" ] && left+=("$d")
done
[ ${#left[@]} -eq 0 ] || fail "left behind after remove --purge: ${left[*]}"
! dpkg-query -W -f='${Status}' gemflow 2>/dev/null | grep -q "installed" || fail "dpkg still lists gemflow"
step "passed"
