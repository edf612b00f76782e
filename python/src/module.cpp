// gemflow._gemflow: the C++ half of the Python module (python/gemflow/__init__.py is the other).
//
// It holds one host (registry + plugins) per process, converts values between the SDK types and
// Python (NumPy arrays viewing the host copy where the layout allows), runs single nodes and
// whole workflows with the GIL released, and turns Ctrl-C (KeyboardInterrupt) into the run's
// cooperative cancellation. docs/python.md describes the Python API built on it.
#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "gemflow/atomic_file.hpp"
#include "gemflow/config.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/types.hpp"
#include "gemflow/workflow.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace gemflow::python {
namespace {

// ---- The host -------------------------------------------------------------------------------

/// The plugin folder of the installation (or build tree) this module belongs to: beside
/// libgemflow_core (<prefix>/lib/gemflow/plugins). The core's own search path starts from the
/// executable, which is python3 here.
std::vector<fs::path> own_plugin_dirs() {
  Dl_info info{};
  std::vector<fs::path> dirs;
  if (dladdr(reinterpret_cast<const void*>(&gemflow::nearest_name), &info) != 0 && info.dli_fname) {
    const fs::path lib = fs::absolute(info.dli_fname).parent_path();
    dirs.push_back(lib.parent_path() / GEMFLOW_PY_PLUGIN_RELDIR);
    dirs.push_back(lib / "gemflow" / "plugins");
  }
  return dirs;
}

struct Host {
  Registry registry;
  PluginHost plugins{registry};
  Host() { plugins.load_all(own_plugin_dirs()); }
};

Host& host() {
  static Host h;  // loaded on first use, never unloaded (plugin values may outlive anything)
  return h;
}

const NodeEntry& entry_of(const std::string& id) {
  if (const NodeEntry* e = host().registry.find_node(id)) return *e;
  const std::string near = nearest_name(id, host().registry.node_ids());
  throw py::value_error(
      "unknown node type '" + id + "'" +
      (near.empty() ? std::string(" (gemflow.nodes() lists them)") : " (did you mean '" + near + "'?)"));
}

// ---- Data: a Value held by Python ----------------------------------------------------------

/// An SDK value on the Python side; the arrays viewing it keep it alive.
struct Data {
  Value value;
  [[nodiscard]] std::string repr() const { return "<gemflow." + value.type() + ": " + value.summary() + ">"; }
};

constexpr const char* kOwnerCapsule = "gemflow.Value";

/// A capsule owning a copy of `v` (shared ownership): the base of arrays viewing its host copy.
py::capsule owner_of(const Value& v) {
  return py::capsule(new Value(v), kOwnerCapsule,
                     [](PyObject* cap) { delete static_cast<Value*>(PyCapsule_GetPointer(cap, kOwnerCapsule)); });
}

/// A read-only NumPy view of `count` elements of T at `data`, shaped `shape`, owned by `owner`.
template <class T>
py::array view(const T* data, std::vector<py::ssize_t> shape, const py::capsule& owner) {
  py::array a(py::dtype::of<T>(), std::move(shape), {}, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

/// The Value an array views, when it is a view made by view() of a value of type `type` whose
/// data pointer is the array's (a result passed back into a node: no copy).
std::optional<Value> viewed_value(const py::array& a, std::string_view type) {
  py::object base = a.attr("base");
  while (!base.is_none()) {
    if (PyCapsule_CheckExact(base.ptr()) && std::strcmp(PyCapsule_GetName(base.ptr()), kOwnerCapsule) == 0) {
      const auto* v = static_cast<const Value*>(PyCapsule_GetPointer(base.ptr(), kOwnerCapsule));
      if (v && v->type() == type) return *v;
      return std::nullopt;
    }
    if (!py::hasattr(base, "base")) break;
    base = base.attr("base");
  }
  return std::nullopt;
}

// ---- SDK → Python ---------------------------------------------------------------------------

template <class T>
py::array matrix_view(const Matrix<T>& m, const py::capsule& owner) {
  return view(m.data(), {static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())}, owner);
}

py::list strings(const std::vector<std::string>& v) {
  py::list l;
  for (const auto& s : v) l.append(py::str(s));
  return l;
}

py::object py_matrix_f64(const Value& v) { return matrix_view(*v.as<Matrix<double>>(), owner_of(v)); }

py::object py_matrix_f32(const Value& v) { return matrix_view(*v.as<Matrix<float>>(), owner_of(v)); }

py::object py_image(const Value& v) {
  auto im = v.as<Image>();
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(im->height), static_cast<py::ssize_t>(im->width), 4};
  if (im->format == Image::Format::RGBA8) return view(im->u8.data(), shape, owner_of(v));
  return view(im->f32.data(), shape, owner_of(v));
}

py::object py_signal(const Value& v) {
  auto s = v.as<Signal>();
  py::dict r;
  r["samples"] = matrix_view(s->samples, owner_of(v));
  r["sample_rate"] = s->sample_rate;
  r["start_time"] = s->start_time;
  r["times"] = s->times.empty()
                   ? py::object(py::none())
                   : py::object(view(s->times.data(), {static_cast<py::ssize_t>(s->times.size())}, owner_of(v)));
  r["channels"] = strings(s->channels);
  r["units"] = strings(s->units);
  return r;
}

py::object py_scores(const Value& v) {
  auto s = v.as<Scores>();
  py::dict r;
  r["scores"] = matrix_view(s->scores, owner_of(v));
  r["labels"] = strings(s->labels);
  r["sample_rate"] = s->sample_rate;
  return r;
}

py::object py_segmentation(const Value& v) {
  auto s = v.as<Segmentation>();
  py::dict r;
  r["length"] = s->length;
  r["labels"] = strings(s->labels);
  r["sample_rate"] = s->sample_rate;
  py::list segs;
  for (const auto& g : s->segments) {
    py::dict x;
    x["start"] = g.start;
    x["end"] = g.end;
    x["label"] = g.label < s->labels.size() ? py::object(py::str(s->labels[g.label])) : py::object(py::int_(g.label));
    x["score"] = g.score;
    segs.append(x);
  }
  r["segments"] = segs;
  return r;
}

py::object py_table(const Value& v) {
  auto tb = v.as<Table>();
  py::dict r;
  r["columns"] = strings(tb->columns);
  py::list rows;
  for (const auto& row : tb->rows) {
    py::list x;
    for (const auto& c : row) std::visit([&](const auto& cell) { x.append(py::cast(cell)); }, c);
    rows.append(x);
  }
  r["rows"] = rows;
  return r;
}

py::object py_structure(const Value& v) {
  auto s = v.as<Structure>();
  py::dict r;
  r["title"] = s->title;
  py::list atoms;
  for (const auto& a : s->atoms) {
    py::dict x;
    x["name"] = a.name;
    x["element"] = a.element;
    x["residue"] = a.residue;
    x["residue_number"] = a.residue_number;
    x["insertion"] = a.insertion;
    x["chain"] = a.chain;
    x["segment"] = a.segment;
    x["hetero"] = a.hetero;
    x["serial"] = a.serial;
    x["occupancy"] = a.occupancy;
    x["b_factor"] = a.b_factor;
    atoms.append(x);
  }
  r["atoms"] = atoms;
  const auto n = static_cast<py::ssize_t>(s->atoms.size());
  py::array_t<double> xyz({static_cast<py::ssize_t>(s->models.size()), n, py::ssize_t{3}});
  double* out = xyz.mutable_data();
  for (const auto& m : s->models) {
    std::memcpy(out, m.data(), m.size() * sizeof(Vec3));
    out += m.size() * 3;
  }
  r["coordinates"] = xyz;
  py::array_t<std::uint64_t> bonds({static_cast<py::ssize_t>(s->bonds.size()), py::ssize_t{2}});
  if (!s->bonds.empty())
    std::memcpy(bonds.mutable_data(), s->bonds.data(), s->bonds.size() * 2 * sizeof(std::uint64_t));
  r["bonds"] = bonds;
  return r;
}

py::object py_distance_bounds(const Value& v) {
  auto b = v.as<DistanceBounds>();
  const auto own = owner_of(v);
  py::dict r;
  r["lower"] = matrix_view(b->lower, own);
  r["upper"] = matrix_view(b->upper, own);
  r["labels"] = strings(b->labels);
  r["atom_index"] = view(reinterpret_cast<const std::uint64_t*>(b->atom_index.data()),
                         {static_cast<py::ssize_t>(b->atom_index.size())}, own);
  r["restraint"] = b->restraint.empty() ? py::object(py::none()) : py::object(matrix_view(b->restraint, own));
  return r;
}

py::object py_tri_mesh(const Value& v) {
  auto m = v.as<TriMesh>();
  const auto own = owner_of(v);
  py::dict r;
  r["vertices"] =
      view(reinterpret_cast<const double*>(m->vertices.data()), {static_cast<py::ssize_t>(m->vertices.size()), 3}, own);
  r["faces"] = view(reinterpret_cast<const std::uint32_t*>(m->faces.data()),
                    {static_cast<py::ssize_t>(m->faces.size()), 3}, own);
  py::list loops;
  for (const auto& l : m->boundary) loops.append(view(l.data(), {static_cast<py::ssize_t>(l.size())}, own));
  r["boundary"] = loops;
  r["uv"] = m->uv.empty() ? py::object(py::none())
                          : py::object(view(reinterpret_cast<const double*>(m->uv.data()),
                                            {static_cast<py::ssize_t>(m->uv.size()), 2}, own));
  return r;
}

py::object py_circle_packing(const Value& v) {
  auto c = v.as<CirclePacking>();
  const auto own = owner_of(v);
  py::dict r;
  r["geometry"] = c->geometry == CirclePacking::Geometry::Hyperbolic ? "hyperbolic" : "euclidean";
  r["radii"] = view(c->radii.data(), {static_cast<py::ssize_t>(c->radii.size())}, own);
  r["centres"] =
      view(reinterpret_cast<const double*>(c->centres.data()), {static_cast<py::ssize_t>(c->centres.size()), 2}, own);
  r["faces"] = view(reinterpret_cast<const std::uint32_t*>(c->faces.data()),
                    {static_cast<py::ssize_t>(c->faces.size()), 3}, own);
  r["boundary"] = view(c->boundary.data(), {static_cast<py::ssize_t>(c->boundary.size())}, own);
  return r;
}

/// The plain Python form of a value (dicts of arrays and lists); python/gemflow wraps it in
/// its classes. Arrays view the host copy where the layout allows (Matrix, Image, Signal,
/// Scores, bounds, mesh and packing arrays); Structure coordinates are copied (one array per
/// model in the SDK). Types without a form here stay a Data.
py::object to_python(const Data& d) {
  using Form = py::object (*)(const Value&);
  static const std::map<std::string, Form, std::less<>> forms{
      {"Matrix<f64>", &py_matrix_f64},
      {"Matrix<f32>", &py_matrix_f32},
      {"Image", &py_image},
      {"Signal", &py_signal},
      {"Scores", &py_scores},
      {"Segmentation", &py_segmentation},
      {"Table", &py_table},
      {"Structure", &py_structure},
      {"DistanceBounds", &py_distance_bounds},
      {"TriMesh", &py_tri_mesh},
      {"CirclePacking", &py_circle_packing},
  };
  if (d.value.empty()) return py::none();
  const auto it = forms.find(d.value.type());
  return it == forms.end() ? py::cast(d) : it->second(d.value);
}

// ---- Python → SDK ---------------------------------------------------------------------------

/// Names what is being converted in every error: "port 'bounds' of distgeom.triangle_smoothing".
struct Where {
  std::string text;
  [[noreturn]] void type_error(const std::string& what) const { throw py::type_error(text + ": " + what); }
  [[noreturn]] void value_error(const std::string& what) const { throw py::value_error(text + ": " + what); }
};

std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string type_name(const py::handle& o) { return py::str(py::type::of(o).attr("__name__")); }

/// A mapping's item or an object's attribute; nullopt when absent (or None).
std::optional<py::object> field(const py::handle& obj, const char* name) {
  if (py::isinstance<py::dict>(obj)) {
    py::dict d = py::reinterpret_borrow<py::dict>(obj);
    if (d.contains(name) && !d[name].is_none()) return py::reinterpret_borrow<py::object>(d[name]);
    return std::nullopt;
  }
  if (py::hasattr(obj, name)) {
    py::object v = obj.attr(name);
    if (!v.is_none()) return v;
  }
  return std::nullopt;
}

py::object required(const py::handle& obj, const char* name, const Where& w, const char* expected) {
  auto f = field(obj, name);
  if (!f) w.type_error(std::string("expected ") + expected + ", got " + type_name(obj) + " without '" + name + "'");
  return *f;
}

/// `obj` as a C-contiguous array of T with `ndim` dimensions (-1 in `shape`: any size). Real
/// numbers of another dtype are converted (a copy); complex, text and object arrays are refused.
template <class T>
py::array_t<T, py::array::c_style | py::array::forcecast> as_array(const py::handle& obj,
                                                                   std::vector<py::ssize_t> shape, const Where& w,
                                                                   const std::string& expected) {
  py::array a = py::array::ensure(obj);
  if (!a) w.type_error("expected " + expected + ", got " + type_name(obj));
  const char kind = a.dtype().kind();
  const bool integral_target = std::is_integral_v<T>;
  if (!(kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b') || (integral_target && kind == 'f'))
    w.type_error(
        "expected " + expected + ", got " +
        (py::isinstance<py::array>(obj) ? "an array of dtype " + std::string(py::str(a.dtype())) : type_name(obj)));
  if (a.ndim() != static_cast<py::ssize_t>(shape.size()))
    w.value_error("expected " + expected + ", got an array of shape " + shape_str(a));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] >= 0 && a.shape(static_cast<py::ssize_t>(i)) != shape[i])
      w.value_error("expected " + expected + ", got an array of shape " + shape_str(a));
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

template <class T>
Matrix<T> to_matrix(const py::handle& obj, const Where& w, const std::string& expected) {
  auto a = as_array<T>(obj, {-1, -1}, w, expected);
  const auto rows = static_cast<std::size_t>(a.shape(0)), cols = static_cast<std::size_t>(a.shape(1));
  return Matrix<T>(rows, cols, std::vector<T>(a.data(), a.data() + rows * cols));
}

template <class T>
std::vector<T> to_vector(const py::handle& obj, const Where& w, const std::string& expected) {
  auto a = as_array<T>(obj, {-1}, w, expected);
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

template <class T, std::size_t N>
std::vector<std::array<T, N>> to_rows(const py::handle& obj, const Where& w, const std::string& expected) {
  auto a = as_array<T>(obj, {-1, static_cast<py::ssize_t>(N)}, w, expected);
  std::vector<std::array<T, N>> out(static_cast<std::size_t>(a.shape(0)));
  if (!out.empty()) std::memcpy(out.data(), a.data(), out.size() * N * sizeof(T));
  return out;
}

std::vector<std::string> to_strings(const py::handle& obj, const Where& w, const char* what) {
  std::vector<std::string> out;
  if (py::isinstance<py::str>(obj)) w.type_error(std::string(what) + ": expected a list of strings, got a string");
  for (auto x : py::iter(obj)) {
    if (!py::isinstance<py::str>(x)) w.type_error(std::string(what) + ": expected strings, got " + type_name(x));
    out.push_back(x.cast<std::string>());
  }
  return out;
}

template <class T>
Value checked(T value, const Where& w) {
  if constexpr (requires { value.validate(); })
    if (auto why = value.validate()) w.value_error(*why);
  return Value::make<T>(std::move(value));
}

Table::Cell to_cell(const py::handle& x, const Where& w) {
  if (py::isinstance<py::bool_>(x)) return static_cast<std::int64_t>(x.cast<bool>());
  if (py::isinstance<py::int_>(x)) return x.cast<std::int64_t>();
  if (py::isinstance<py::float_>(x)) return x.cast<double>();
  if (py::isinstance<py::str>(x)) return x.cast<std::string>();
  if (py::hasattr(x, "dtype") && py::hasattr(x, "item")) return to_cell(x.attr("item")(), w);  // NumPy scalars
  w.type_error("a table cell must be a number or text, got " + type_name(x));
}

Value to_table(const py::handle& obj, const Where& w) {
  Table t;
  if (py::hasattr(obj, "to_dict") && py::hasattr(obj, "columns")) {  // a pandas DataFrame
    t.columns =
        to_strings(obj.attr("columns").attr("map")(py::str(py::module_::import("builtins").attr("str"))), w, "columns");
    for (auto row : obj.attr("itertuples")(py::arg("index") = false, py::arg("name") = py::none())) {
      std::vector<Table::Cell> r;
      for (auto c : row) r.push_back(to_cell(c, w));
      t.rows.push_back(std::move(r));
    }
    return Value::make<Table>(std::move(t));
  }
  if (auto cols = field(obj, "columns"); cols && field(obj, "rows")) {
    t.columns = to_strings(*cols, w, "columns");
    for (auto row : py::iter(*field(obj, "rows"))) {
      std::vector<Table::Cell> r;
      for (auto c : row) r.push_back(to_cell(c, w));
      if (r.size() != t.columns.size())
        w.value_error("a row has " + std::to_string(r.size()) + " cells for " + std::to_string(t.columns.size()) +
                      " columns");
      t.rows.push_back(std::move(r));
    }
    return Value::make<Table>(std::move(t));
  }
  if (py::isinstance<py::list>(obj)) {  // records: a list of dicts with the same keys
    for (auto rec : obj) {
      if (!py::isinstance<py::dict>(rec))
        w.type_error("expected a list of dicts (records), got a list of " + type_name(rec));
      py::dict d = py::reinterpret_borrow<py::dict>(rec);
      if (t.columns.empty() && t.rows.empty())
        for (auto kv : d) t.columns.push_back(py::str(kv.first));
      std::vector<Table::Cell> r;
      for (const auto& c : t.columns) {
        if (!d.contains(c)) w.value_error("record " + std::to_string(t.rows.size()) + " has no '" + c + "'");
        r.push_back(to_cell(d[py::str(c)], w));
      }
      if (d.size() != t.columns.size())
        w.value_error("record " + std::to_string(t.rows.size()) + " has other keys than the first");
      t.rows.push_back(std::move(r));
    }
    return Value::make<Table>(std::move(t));
  }
  w.type_error("expected a Table: a list of dicts, a pandas DataFrame or {'columns': [...], 'rows': [...]}, got " +
               type_name(obj));
}

Value sdk_matrix_f64(const py::handle& obj, const Where& w) {
  return Value::make(to_matrix<double>(obj, w, "a 2-D array (rows × cols) of float64"));
}

Value sdk_matrix_f32(const py::handle& obj, const Where& w) {
  return Value::make(to_matrix<float>(obj, w, "a 2-D array (rows × cols) of float32"));
}

Value sdk_image(const py::handle& obj, const Where& w) {
  py::array a = py::array::ensure(obj);
  if (!a)
    w.type_error("expected an image: an H×W×4 array (RGBA; float32 linear premultiplied, or uint8 sRGB), got " +
                 type_name(obj));
  const bool u8 = a.dtype().kind() == 'u' && a.dtype().itemsize() == 1;
  const std::string expected = "an H×W×4 array (RGBA; float32 linear premultiplied, or uint8 sRGB)";
  if (u8) {
    auto px = as_array<std::uint8_t>(a, {-1, -1, 4}, w, expected);
    Image im(static_cast<std::size_t>(px.shape(1)), static_cast<std::size_t>(px.shape(0)), Image::Format::RGBA8);
    std::memcpy(im.u8.data(), px.data(), im.u8.size());
    return checked(std::move(im), w);
  }
  if (a.dtype().kind() != 'f')
    w.type_error("expected " + expected + ", got an array of dtype " + std::string(py::str(a.dtype())));
  auto px = as_array<float>(a, {-1, -1, 4}, w, expected);
  Image im(static_cast<std::size_t>(px.shape(1)), static_cast<std::size_t>(px.shape(0)), Image::Format::RGBA32F);
  std::memcpy(im.f32.data(), px.data(), im.f32.size() * sizeof(float));
  return checked(std::move(im), w);
}

Value sdk_signal(const py::handle& obj, const Where& w) {
  Signal s;
  const bool bare = py::isinstance<py::array>(obj) || py::isinstance<py::list>(obj);
  py::object samples = bare ? py::reinterpret_borrow<py::object>(obj)
                            : required(obj, "samples", w, "a Signal (an array, or an object with 'samples')");
  py::array a = py::array::ensure(samples);
  if (a && a.ndim() == 1) samples = a.attr("reshape")(-1, 1);
  s.samples = to_matrix<double>(samples, w, "a T×D (or length-T) array of samples");
  if (!bare) {
    if (auto f = field(obj, "sample_rate")) s.sample_rate = f->cast<double>();
    if (auto f = field(obj, "start_time")) s.start_time = f->cast<double>();
    if (auto f = field(obj, "times")) s.times = to_vector<double>(*f, w, "a length-T array of times (s)");
    if (auto f = field(obj, "channels")) s.channels = to_strings(*f, w, "channels");
    if (auto f = field(obj, "units")) s.units = to_strings(*f, w, "units");
  }
  if (s.channels.empty())
    for (std::size_t c = 0; c < s.dims(); ++c) s.channels.push_back("x" + std::to_string(c));
  if (s.units.empty()) s.units.assign(s.dims(), "");
  return checked(std::move(s), w);
}

Value sdk_scores(const py::handle& obj, const Where& w) {
  Scores s;
  const bool bare = py::isinstance<py::array>(obj) || py::isinstance<py::list>(obj);
  s.scores = to_matrix<double>(bare ? obj : required(obj, "scores", w, "Scores (an array, or an object with 'scores')"),
                               w, "a T×C array of scores");
  if (!bare) {
    if (auto f = field(obj, "labels")) s.labels = to_strings(*f, w, "labels");
    if (auto f = field(obj, "sample_rate")) s.sample_rate = f->cast<double>();
  }
  if (s.labels.empty())
    for (std::size_t c = 0; c < s.classes(); ++c) s.labels.push_back(std::to_string(c));
  return checked(std::move(s), w);
}

Value sdk_segmentation(const py::handle& obj, const Where& w) {
  Segmentation s;
  const char* exp = "a Segmentation ({'length', 'labels', 'segments': [{'start', 'end', 'label', 'score'}]})";
  s.length = required(obj, "length", w, exp).cast<std::size_t>();
  s.labels = to_strings(required(obj, "labels", w, exp), w, "labels");
  if (auto f = field(obj, "sample_rate")) s.sample_rate = f->cast<double>();
  for (auto g : py::iter(required(obj, "segments", w, exp))) {
    Segment seg;
    seg.start = required(g, "start", w, "a segment").cast<std::size_t>();
    seg.end = required(g, "end", w, "a segment").cast<std::size_t>();
    py::object label = required(g, "label", w, "a segment");
    if (py::isinstance<py::str>(label)) {
      const auto it = std::find(s.labels.begin(), s.labels.end(), label.cast<std::string>());
      if (it == s.labels.end())
        w.value_error("segment label '" + label.cast<std::string>() + "' is not one of the labels");
      seg.label = static_cast<std::size_t>(it - s.labels.begin());
    } else {
      seg.label = label.cast<std::size_t>();
    }
    if (auto f = field(g, "score")) seg.score = f->cast<double>();
    s.segments.push_back(seg);
  }
  return checked(std::move(s), w);
}

Value sdk_structure(const py::handle& obj, const Where& w) {
  Structure s;
  const char* exp = "a Structure ({'atoms': [records], 'coordinates': M×N×3 or N×3 array})";
  if (auto f = field(obj, "title")) s.title = f->cast<std::string>();
  for (auto a : py::iter(required(obj, "atoms", w, exp))) {
    Atom at;
    auto str = [&](const char* k, std::string& out) {
      if (auto f = field(a, k)) out = f->cast<std::string>();
    };
    str("name", at.name);
    str("element", at.element);
    str("residue", at.residue);
    str("insertion", at.insertion);
    str("chain", at.chain);
    str("segment", at.segment);
    if (auto f = field(a, "residue_number")) at.residue_number = f->cast<int>();
    if (auto f = field(a, "hetero")) at.hetero = f->cast<bool>();
    if (auto f = field(a, "serial")) at.serial = f->cast<int>();
    if (auto f = field(a, "occupancy")) at.occupancy = f->cast<double>();
    if (auto f = field(a, "b_factor")) at.b_factor = f->cast<double>();
    s.atoms.push_back(std::move(at));
  }
  py::array c = py::array::ensure(required(obj, "coordinates", w, exp));
  const auto n = static_cast<py::ssize_t>(s.atoms.size());
  const std::string cexp =
      "coordinates of shape (models, " + std::to_string(n) + ", 3) or (" + std::to_string(n) + ", 3)";
  if (c && c.ndim() == 2) c = c.attr("reshape")(1, -1, 3);
  auto xyz = as_array<double>(c, {-1, n, 3}, w, cexp);
  for (py::ssize_t m = 0; m < xyz.shape(0); ++m) {
    std::vector<Vec3> model(static_cast<std::size_t>(n));
    if (n > 0) std::memcpy(model.data(), xyz.data(m, 0, 0), static_cast<std::size_t>(n) * sizeof(Vec3));
    s.models.push_back(std::move(model));
  }
  if (auto f = field(obj, "bonds")) {
    for (const auto& b : to_rows<std::uint64_t, 2>(*f, w, "bonds as a K×2 array of atom indices"))
      s.bonds.push_back({static_cast<std::size_t>(b[0]), static_cast<std::size_t>(b[1])});
  }
  return Value::make(std::move(s));
}

Value sdk_distance_bounds(const py::handle& obj, const Where& w) {
  DistanceBounds b;
  const char* exp = "DistanceBounds ({'lower': N×N, 'upper': N×N, 'labels': [N]})";
  b.lower = to_matrix<double>(required(obj, "lower", w, exp), w, "'lower': an N×N array of float64 (Å)");
  b.upper = to_matrix<double>(required(obj, "upper", w, exp), w, "'upper': an N×N array of float64 (Å)");
  const std::size_t n = b.lower.rows();
  if (b.lower.cols() != n || b.upper.rows() != n || b.upper.cols() != n)
    w.value_error("'lower' and 'upper' must be N×N arrays of the same N, got " + std::to_string(b.lower.rows()) + "×" +
                  std::to_string(b.lower.cols()) + " and " + std::to_string(b.upper.rows()) + "×" +
                  std::to_string(b.upper.cols()));
  if (auto f = field(obj, "labels")) b.labels = to_strings(*f, w, "labels");
  else
    for (std::size_t i = 0; i < n; ++i) b.labels.push_back(std::to_string(i));
  if (b.labels.size() != n)
    w.value_error("'labels' has " + std::to_string(b.labels.size()) + " entries for N = " + std::to_string(n));
  if (auto f = field(obj, "atom_index")) {
    for (auto x : to_vector<std::uint64_t>(*f, w, "'atom_index': a length-N array of integers"))
      b.atom_index.push_back(x);
  } else {
    for (std::size_t i = 0; i < n; ++i) b.atom_index.push_back(i);
  }
  if (b.atom_index.size() != n)
    w.value_error("'atom_index' has " + std::to_string(b.atom_index.size()) + " entries for N = " + std::to_string(n));
  if (auto f = field(obj, "restraint")) {
    b.restraint = to_matrix<int>(*f, w, "'restraint': an N×N array of integers");
    if (b.restraint.rows() != n || b.restraint.cols() != n) w.value_error("'restraint' must be N×N");
  }
  return Value::make(std::move(b));
}

Value sdk_tri_mesh(const py::handle& obj, const Where& w) {
  TriMesh m;
  const char* exp = "a TriMesh ({'vertices': N×3, 'faces': F×3}, optional 'boundary' and 'uv': N×2)";
  m.vertices = to_rows<double, 3>(required(obj, "vertices", w, exp), w, "'vertices': an N×3 array of float64");
  m.faces = to_rows<TriMesh::Index, 3>(required(obj, "faces", w, exp), w, "'faces': an F×3 array of vertex indices");
  if (auto f = field(obj, "boundary")) {
    for (auto loop : py::iter(*f))
      m.boundary.push_back(to_vector<TriMesh::Index>(loop, w, "a boundary loop of vertex indices"));
  } else {
    m.boundary = boundary_loops(m.vertices.size(), m.faces);
  }
  if (auto f = field(obj, "uv"))
    m.uv = to_rows<double, 2>(*f, w, "'uv': an N×2 array of float64 (one (u, v) per vertex)");
  return checked(std::move(m), w);
}

Value sdk_circle_packing(const py::handle& obj, const Where& w) {
  CirclePacking c;
  const char* exp = "a CirclePacking ({'radii': N, 'centres': N×2, 'faces': F×3, 'boundary': N})";
  if (auto f = field(obj, "geometry")) {
    const auto g = f->cast<std::string>();
    if (g != "euclidean" && g != "hyperbolic")
      w.value_error("geometry must be 'euclidean' or 'hyperbolic', got '" + g + "'");
    c.geometry = g == "hyperbolic" ? CirclePacking::Geometry::Hyperbolic : CirclePacking::Geometry::Euclidean;
  }
  c.radii = to_vector<double>(required(obj, "radii", w, exp), w, "'radii': a length-N array");
  c.centres = to_rows<double, 2>(required(obj, "centres", w, exp), w, "'centres': an N×2 array");
  c.faces = to_rows<CirclePacking::Index, 3>(required(obj, "faces", w, exp), w, "'faces': an F×3 array of indices");
  c.boundary = to_vector<std::uint8_t>(required(obj, "boundary", w, exp), w, "'boundary': a length-N array of 0/1");
  return checked(std::move(c), w);
}

/// `obj` as a value of data type `type` for `w`. A Data of that type and an array viewing one
/// pass through without a copy; other values are converted (one copy into the SDK type).
Value from_python(const std::string& type, const py::handle& obj, const Where& w) {
  if (py::isinstance<Data>(obj)) {
    const Data& d = obj.cast<const Data&>();
    if (d.value.type() != type) w.type_error("expected " + type + ", got a gemflow " + d.value.type());
    return d.value;
  }
  if (auto inner = field(obj, "_gemflow_data")) {  // the Python wrappers of python/gemflow
    if (py::isinstance<Data>(*inner) && inner->cast<const Data&>().value.type() == type)
      return inner->cast<const Data&>().value;
  }
  if (py::isinstance<py::array>(obj))
    if (auto v = viewed_value(py::reinterpret_borrow<py::array>(obj), type)) {
      // the whole of the viewed matrix (not a slice or a transposed view of it)
      if (type.starts_with("Matrix<")) {
        py::array a = py::reinterpret_borrow<py::array>(obj);
        const bool f64 = type == "Matrix<f64>";
        const void* data = f64 ? static_cast<const void*>(v->as<Matrix<double>>()->data())
                               : static_cast<const void*>(v->as<Matrix<float>>()->data());
        const std::size_t rows = f64 ? v->as<Matrix<double>>()->rows() : v->as<Matrix<float>>()->rows();
        const std::size_t cols = f64 ? v->as<Matrix<double>>()->cols() : v->as<Matrix<float>>()->cols();
        if (a.data() == data && a.ndim() == 2 && static_cast<std::size_t>(a.shape(0)) == rows &&
            static_cast<std::size_t>(a.shape(1)) == cols && (a.flags() & py::array::c_style))
          return *v;
      }
    }
  using Form = Value (*)(const py::handle&, const Where&);
  static const std::map<std::string, Form, std::less<>> forms{
      {"Matrix<f64>", &sdk_matrix_f64},
      {"Matrix<f32>", &sdk_matrix_f32},
      {"Image", &sdk_image},
      {"Signal", &sdk_signal},
      {"Scores", &sdk_scores},
      {"Segmentation", &sdk_segmentation},
      {"Table", &to_table},
      {"Structure", &sdk_structure},
      {"DistanceBounds", &sdk_distance_bounds},
      {"TriMesh", &sdk_tri_mesh},
      {"CirclePacking", &sdk_circle_packing},
  };
  if (const auto it = forms.find(type); it != forms.end()) return it->second(obj, w);
  w.type_error("a " + type + " comes only from a node (pass the gemflow value a node or run returned), got " +
               type_name(obj));
}

// ---- Parameters -----------------------------------------------------------------------------

/// A Python value as a parameter value (not yet checked against the spec).
ParamValue param_value(const py::handle& v, const Where& w) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<std::int64_t>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::hasattr(v, "__fspath__")) return py::str(v.attr("__fspath__")()).cast<std::string>();
  if (py::hasattr(v, "dtype") && py::hasattr(v, "item")) return param_value(v.attr("item")(), w);
  w.type_error("expected a bool, number or text, got " + type_name(v));
}

py::object py_param(const ParamValue& v) {
  return std::visit([](const auto& x) { return py::object(py::cast(x)); }, v);
}

// ---- Running one node -----------------------------------------------------------------------

/// Counts SIGINTs (Ctrl-C, Jupyter's stop) for the cancellation of node calls: a node may check
/// cancellation on any of its threads, where Python cannot look for signals. watch() puts the
/// counting handler in front of the one installed (Python's, which makes the next
/// PyErr_CheckSignals raise KeyboardInterrupt, and which it then calls); it leaves SIG_DFL and
/// SIG_IGN alone. Called at each node call: a handler installed since (signal.signal) is
/// wrapped again.
class SigintCounter {
 public:
  static void watch() {
    static std::mutex m;
    std::lock_guard lock(m);
    struct sigaction current {};
    sigaction(SIGINT, nullptr, &current);
    if (current.sa_handler == &on_sigint || (current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler == SIG_DFL ||
        current.sa_handler == SIG_IGN)
      return;
    next().store(current.sa_handler);
    struct sigaction ours = current;
    ours.sa_handler = &on_sigint;
    sigaction(SIGINT, &ours, nullptr);
  }
  static std::uint64_t count() { return counter().load(std::memory_order_relaxed); }

 private:
  static void on_sigint(int sig) {
    counter().fetch_add(1, std::memory_order_relaxed);
    if (auto* h = next().load()) h(sig);
  }
  static std::atomic<std::uint64_t>& counter() {
    static std::atomic<std::uint64_t> c{0};
    return c;
  }
  static std::atomic<void (*)(int)>& next() {
    static std::atomic<void (*)(int)> h{nullptr};
    return h;
  }
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<void (*)(int)>::is_always_lock_free);

/// The context of a node called from Python: files relative to `out`, cancelled once a SIGINT
/// (Ctrl-C, Jupyter's stop) arrived during the call, log lines kept for the caller.
class CallContext final : public NodeContext {
 public:
  CallContext(std::string id, fs::path out)
      : id_(std::move(id)), out_(std::move(out)), sigints_(SigintCounter::count()) {}
  const std::string& node_id() const override { return id_; }
  void progress(double, std::string_view) override {}
  bool cancelled() const override { return SigintCounter::count() != sigints_; }
  void log(LogLevel level, std::string_view message) override {
    std::lock_guard lock(m_);
    if (level >= LogLevel::Warning) warnings_.emplace_back(message);
  }
  const fs::path& output_dir() const override { return out_; }
  void add_input_file(const fs::path&) override {}
  void write_file(const fs::path& file, const std::function<void(const fs::path& tmp)>& write) override {
    const fs::path target = file.is_relative() ? out_ / file : file;
    fs::create_directories(target.parent_path());
    const fs::path tmp = target.string() + ".gemflow-tmp";
    try {
      write(tmp);
      fs::rename(tmp, target);
    } catch (...) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
  }
  void record(std::string_view, const ParamValue&) override {}
  const std::string& device_override() const override { return no_override_; }

  std::vector<std::string> warnings() {
    std::lock_guard lock(m_);
    return warnings_;
  }

 private:
  std::string id_;
  fs::path out_;
  std::uint64_t sigints_;
  std::mutex m_;
  std::vector<std::string> warnings_;
  std::string no_override_;
};

py::object node_error;  // gemflow.NodeError

/// Runs node type `id` once: `inputs` by port, `params` by name (unset ones take their
/// default), relative input paths against the cwd, output paths against `out`. Returns the set
/// outputs and the warnings the node logged.
py::tuple call_node(const std::string& id, const py::dict& inputs, const py::dict& params, const fs::path& out) {
  const NodeEntry& e = entry_of(id);
  const NodeSpec& spec = e.spec;
  std::unique_ptr<Node> node = e.create();
  std::vector<ParamValue> values;
  values.reserve(spec.params.size());
  for (const auto& ps : spec.params) values.push_back(ps.default_value);
  std::size_t used = 0;
  const fs::path cwd = fs::current_path();
  for (std::size_t k = 0; k < spec.params.size(); ++k) {
    const ParamSpec& ps = spec.params[k];
    if (!params.contains(ps.name)) {
      if (ps.required) throw py::type_error(id + ": parameter '" + ps.name + "' is required");
      continue;
    }
    ++used;
    const Where w{id + ": parameter '" + ps.name + "'"};
    ParamValue v = param_value(params[py::str(ps.name)], w);
    if (auto why = ps.check(v)) w.value_error(*why);
    if (ps.kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
      v = static_cast<double>(std::get<std::int64_t>(v));
    if ((ps.kind == ParamKind::InputPath || ps.kind == ParamKind::OutputPath) && !std::get<std::string>(v).empty()) {
      const fs::path p = std::get<std::string>(v);
      if (p.is_relative()) v = ((ps.kind == ParamKind::InputPath ? cwd : out) / p).lexically_normal().string();
    }
    values[k] = std::move(v);
  }
  if (used != params.size())
    for (auto kv : params) {
      const std::string name = py::str(kv.first);
      if (!spec.param(name)) {
        std::vector<std::string> names;
        for (const auto& ps : spec.params) names.push_back(ps.name);
        for (const auto& p : spec.inputs) names.push_back(p.name);
        const std::string near = nearest_name(name, names);
        std::string msg = id;
        msg += ": no parameter or input '" + name + "'";
        if (!near.empty()) msg += " (did you mean '" + near + "'?)";
        throw py::type_error(msg);
      }
    }
  const auto value_of = [&](const std::string& name) -> const ParamValue& {
    for (std::size_t k = 0; k < spec.params.size(); ++k)
      if (spec.params[k].name == name) return values[k];
    return spec.params.front().default_value;  // rules name parameters of the spec (checked at registration)
  };
  if (const auto broken = spec.broken_rules(value_of); !broken.empty())
    throw py::value_error(id + ": " + rule_message(*broken.front(), value_of));
  for (std::size_t k = 0; k < spec.params.size(); ++k) node->set_param(spec.params[k].name, values[k]);

  for (const auto& p : spec.inputs) {
    if (!inputs.contains(p.name)) {
      if (p.optional) continue;
      throw py::type_error(id + ": input '" + p.name + "' (" + p.type + ") is required");
    }
    py::handle obj = inputs[py::str(p.name)];
    if (obj.is_none() && p.optional) continue;
    node->set_input(p.name, from_python(p.type, obj, Where{id + ": input '" + p.name + "'"}));
  }
  for (auto kv : inputs)
    if (!spec.input(py::str(kv.first).cast<std::string>()))
      throw py::type_error(id + ": no input '" + py::str(kv.first).cast<std::string>() + "'");

  SigintCounter::watch();
  CallContext ctx(id, out);
  std::string error;
  bool cancelled = false;
  {
    py::gil_scoped_release nogil;
    try {
      node->execute(ctx);
    } catch (const Cancelled&) {
      cancelled = true;
    } catch (const std::exception& ex) {
      error = id + ": " + ex.what();
    } catch (...) {
      error = id + ": unknown exception";
    }
  }
  // Ctrl-C during the call: KeyboardInterrupt, whatever the node threw when it stopped
  if (ctx.cancelled() && PyErr_CheckSignals() != 0) throw py::error_already_set();
  if (cancelled) throw py::value_error(id + ": cancelled");
  if (!error.empty()) {
    PyErr_SetString(node_error.ptr(), error.c_str());
    throw py::error_already_set();
  }
  py::dict outs;
  for (const auto& o : spec.outputs) {
    const Value& v = node->output(o.name);
    if (!v.empty()) outs[py::str(o.name)] = Data{v};
  }
  return py::make_tuple(outs, ctx.warnings());
}

// ---- Specs ----------------------------------------------------------------------------------

py::dict spec_dict(const NodeEntry& e) {
  const NodeSpec& s = e.spec;
  auto ports = [](const std::vector<PortSpec>& ps) {
    py::list l;
    for (const auto& p : ps) {
      py::dict d;
      d["name"] = p.name;
      d["type"] = p.type;
      d["optional"] = p.optional;
      d["doc"] = p.doc;
      l.append(d);
    }
    return l;
  };
  py::list params;
  for (const auto& p : s.params) {
    py::dict d;
    d["name"] = p.name;
    d["kind"] = to_string(p.kind);
    d["default"] = py_param(p.default_value);
    d["required"] = p.required;
    d["min"] = p.min ? py::object(py::float_(*p.min)) : py::object(py::none());
    d["max"] = p.max ? py::object(py::float_(*p.max)) : py::object(py::none());
    d["unit"] = p.unit;
    d["choices"] = p.choices;
    d["extensions"] = p.extensions;
    d["doc"] = p.doc;
    params.append(d);
  }
  py::dict d;
  d["id"] = s.info.id;
  d["version"] = s.info.version;
  d["title"] = s.info.title;
  d["category"] = s.info.category;
  d["doc"] = s.info.doc;
  d["errors"] = s.info.errors;
  d["memory"] = s.info.memory;
  d["determinism"] = s.info.determinism;
  d["references"] = s.info.references;
  d["stochastic"] = s.info.stochastic;
  d["origin"] = e.origin;
  d["inputs"] = ports(s.inputs);
  d["outputs"] = ports(s.outputs);
  d["params"] = params;
  return d;
}

// ---- Workflows ------------------------------------------------------------------------------

struct PyDiagnostic {
  Diagnostic d;
};

std::vector<PyDiagnostic> wrap(const std::vector<Diagnostic>& ds) {
  std::vector<PyDiagnostic> out;
  out.reserve(ds.size());
  for (const auto& d : ds) out.push_back({d});
  return out;
}

/// A workflow being edited or run from Python, with the in-memory result cache of its runs
/// (a second run recomputes only what changed).
struct PyWorkflow {
  Workflow wf;
  std::shared_ptr<ResultCache> session = std::make_shared<ResultCache>();
  /// What loading found (it validated the file too), reported by validate() until an edit.
  std::optional<std::vector<Diagnostic>> loaded;
};

/// One event of a run, handed to the progress callback on the calling thread.
struct PyEvent {
  std::string kind;  ///< "state", "progress", "log"
  std::string node;
  std::string state;  ///< for "state": idle, queued, running, done, cached, failed, cancelled, skipped
  double progress = 0.0;
  std::string message;
  std::string level;  ///< for "log": debug, info, warning, error
};

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "info";
}

/// What Workflow.run passes down (python/gemflow/__init__.py: Workflow.run documents them).
struct PyRunOptions {
  std::vector<std::string> sets;  ///< "node.param=value"
  std::string device;
  std::optional<fs::path> out;
  std::optional<fs::path> cache;  ///< a folder for the lasting cache; none: the default one
  bool use_cache = true;
  std::string until;
  int jobs = 0;
};

/// One run of a workflow from Python: run_workflow() on a worker thread while the calling
/// thread (holding the GIL only between waits) hands events to `progress` and polls for
/// KeyboardInterrupt, which cancels the run; the interrupt (or what the callback raised) is
/// raised again once every node has stopped.
class PyRun {
 public:
  PyRun(PyWorkflow& pw, PyRunOptions o, py::object progress)
      : pw_(pw), o_(std::move(o)), progress_(std::move(progress)), wf_(pw.wf) {}

  /// A dict: ok, cancelled, diagnostics, nodes {id: {state, error, seconds, outputs}},
  /// provenance, provenance_error, out_dir.
  py::dict run() {
    std::vector<Diagnostic> diags;
    for (const auto& s : o_.sets)
      if (auto d = apply_override(wf_, s, host().registry)) diags.push_back(*d);
    if (!diags.empty()) return invalid(diags);
    check_device();
    set_options();
    std::thread worker([this] { work(); });
    pump();
    {
      py::gil_scoped_release nogil;
      worker.join();
    }
    if (pending_) {
      pending_->restore();
      throw py::error_already_set();
    }
    if (!run_error_.empty()) throw std::runtime_error("the run could not start: " + run_error_);
    return result();
  }

 private:
  static py::dict invalid(const std::vector<Diagnostic>& ds) {
    py::dict r;
    r["ok"] = false;
    r["cancelled"] = false;
    r["diagnostics"] = wrap(ds);
    r["nodes"] = py::dict();
    r["provenance"] = "";
    r["provenance_error"] = "";
    r["out_dir"] = "";
    return r;
  }

  void check_device() const {
    if (o_.device.empty()) return;
    const auto req = DeviceRequest::parse(o_.device);
    if (!req) throw py::value_error("device: '" + o_.device + "' is not a device (auto, cpu, cuda, cuda:N)");
    try {
      (void)resolve_device(*req);
    } catch (const std::exception& e) {
      throw py::value_error("device: " + std::string(e.what()));
    }
  }

  void set_options() {
    std::string name =
        wf_.name.empty() ? (wf_.file.empty() ? std::string("workflow") : wf_.file.stem().string()) : wf_.name;
    for (char& c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    opt_.out_dir = o_.out ? fs::absolute(*o_.out) : fs::absolute(fs::path("out") / name);
    opt_.jobs = o_.jobs;
    opt_.device = o_.device;
    opt_.until = o_.until;
    opt_.cache = pw_.session.get();
    opt_.plugins = &host().plugins.records();
    opt_.command_line = {"python: gemflow.Workflow.run"};
    opt_.cancel = &cancel_;
    if (o_.use_cache) {
      try {
        disk_.emplace(o_.cache ? fs::absolute(*o_.cache) : DiskCache::default_dir());
        opt_.disk_cache = &*disk_;
      } catch (const std::exception& e) {  // a cache is an optimisation: never a reason not to run
        PyErr_WarnEx(PyExc_RuntimeWarning, ("no result cache: " + std::string(e.what())).c_str(), 1);
      }
    }
    if (!progress_.is_none()) opt_.on_event = [this](const RunEvent& e) { queue(e); };
  }

  /// From the run's threads: the event in Python's terms, queued for the calling thread.
  void queue(const RunEvent& e) {
    if (e.kind == RunEvent::Kind::Preview) return;
    PyEvent pe;
    pe.node = e.node;
    pe.message = e.message;
    if (e.kind == RunEvent::Kind::State) {
      pe.kind = "state";
      pe.state = lower(to_string(e.state));
    } else if (e.kind == RunEvent::Kind::Progress) {
      pe.kind = "progress";
      pe.progress = e.progress;
    } else {
      pe.kind = "log";
      pe.level = level_name(e.level);
    }
    std::lock_guard lock(m_);
    events_.push_back(std::move(pe));
    cv_.notify_one();
  }

  void work() {
    try {
      rr_ = run_workflow(wf_, host().registry, opt_);
    } catch (const std::exception& e) {
      run_error_ = e.what();
    }
    std::lock_guard lock(m_);
    done_ = true;
    cv_.notify_one();
  }

  /// The calling thread until the run ends: events to the callback, Ctrl-C to cancellation.
  void pump() {
    for (;;) {
      std::deque<PyEvent> batch;
      bool finished = false;
      {
        py::gil_scoped_release nogil;
        std::unique_lock lock(m_);
        cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return done_ || !events_.empty(); });
        batch.swap(events_);
        finished = done_;
      }
      if (!pending_) deliver(batch);
      if (finished) return;
    }
  }

  void deliver(std::deque<PyEvent>& batch) {
    for (auto& e : batch) {
      try {
        progress_(py::cast(std::move(e)));
      } catch (py::error_already_set& ex) {
        pending_ = std::make_unique<py::error_already_set>(std::move(ex));
        cancel_ = true;
        return;
      }
    }
    if (PyErr_CheckSignals() != 0) {
      pending_ = std::make_unique<py::error_already_set>();
      cancel_ = true;
    }
  }

  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  py::dict result() const {
    py::dict r;
    r["ok"] = rr_.ok();
    r["cancelled"] = rr_.cancelled;
    r["diagnostics"] = wrap(rr_.diagnostics);
    py::dict nodes;
    for (const auto& [id, nr] : rr_.nodes) {
      py::dict n;
      n["state"] = lower(to_string(nr.state));
      n["error"] = nr.error;
      n["seconds"] = nr.seconds;
      py::dict outs;
      for (const auto& [port, v] : nr.outputs)
        if (!v.empty() && !port.starts_with("__")) outs[py::str(port)] = Data{v};
      n["outputs"] = outs;
      nodes[py::str(id)] = n;
    }
    r["nodes"] = nodes;
    r["provenance"] = rr_.provenance.string();
    r["provenance_error"] = rr_.provenance_error;
    r["out_dir"] = opt_.out_dir.string();
    return r;
  }

  PyWorkflow& pw_;
  PyRunOptions o_;
  py::object progress_;
  Workflow wf_;  // a copy: --set applies to this run only
  RunOptions opt_;
  std::optional<DiskCache> disk_;
  std::atomic<bool> cancel_{false};
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<PyEvent> events_;
  bool done_ = false;
  RunResult rr_;
  std::string run_error_;
  std::unique_ptr<py::error_already_set> pending_;  // KeyboardInterrupt, or what the callback raised
};

std::pair<std::string, std::string> split_port(const std::string& text, const char* what) {
  const auto dot = text.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size())
    throw py::value_error(std::string(what) + ": expected 'node.port', got '" + text + "'");
  return {text.substr(0, dot), text.substr(dot + 1)};
}

}  // namespace
}  // namespace gemflow::python

PYBIND11_MODULE(_gemflow, m) {
  using namespace gemflow;
  using namespace gemflow::python;
  m.doc() = "C++ half of the gemflow module (use `import gemflow`)";
  m.attr("__version__") = GEMFLOW_SDK_VERSION;

  struct NodeErrorTag {};
  static py::exception<Error> error_type(m, "GemflowError", PyExc_RuntimeError);
  node_error = py::exception<NodeErrorTag>(m, "NodeError", error_type.ptr());
  // pybind11's ExceptionTranslator takes the exception_ptr by value
  py::register_exception_translator([](std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error_type.ptr(), e.what());
    }
  });

  py::class_<Data>(m, "Data", "A Gemflow value (any data type), as a node or a run returned it")
      .def_property_readonly(
          "type", [](const Data& d) { return d.value.type(); }, "Data type name")
      .def(
          "summary", [](const Data& d) { return d.value.summary(); }, "One line: what it holds")
      .def("__repr__", &Data::repr);

  m.def("to_python", &to_python, py::arg("data"),
        "The value as plain Python: NumPy arrays (read-only views of the value), dicts and lists");
  m.def(
      "from_python",
      [](const std::string& type, const py::object& obj, const std::string& what) {
        return Data{from_python(type, obj, Where{what})};
      },
      py::arg("type"), py::arg("obj"), py::arg("what") = "value",
      "Converts a Python object into a Gemflow value of data type `type`");

  m.def("node_ids", [] { return host().registry.node_ids(); });
  m.def(
      "node_spec", [](const std::string& id) { return spec_dict(entry_of(id)); }, py::arg("id"));
  m.def("types", [] {
    py::list l;
    for (const auto* t : host().registry.types()) l.append(py::make_tuple(t->name, t->doc));
    return l;
  });
  m.def("plugins", [] {
    py::list l;
    for (const auto& r : host().plugins.records()) {
      py::dict d;
      d["file"] = r.file.string();
      d["name"] = r.name;
      d["version"] = r.version;
      d["loaded"] = r.loaded;
      d["error"] = r.error;
      d["nodes"] = r.node_ids;
      l.append(d);
    }
    return l;
  });
  m.def(
      "load_plugins",
      [](const fs::path& dir) {
        if (!fs::is_directory(dir)) throw py::value_error(dir.string() + ": not a folder");
        const std::size_t before = host().plugins.records().size();
        host().plugins.load_directory(dir);
        py::list failed;
        const auto& rs = host().plugins.records();
        for (std::size_t i = before; i < rs.size(); ++i)
          if (!rs[i].loaded) failed.append(rs[i].file.string() + ": " + rs[i].error);
        return failed;
      },
      py::arg("dir"), "Loads the plugins of a folder; returns the failures ('file: reason')");
  m.def("plugin_search_path", [] { return PluginHost::search_path(own_plugin_dirs()); });
  m.def("call_node", &call_node, py::arg("id"), py::arg("inputs"), py::arg("params"), py::arg("out"));

  py::class_<PyDiagnostic>(m, "Diagnostic", "A problem found while loading or validating a workflow")
      .def_property_readonly(
          "severity",
          [](const PyDiagnostic& d) { return d.d.severity == Diagnostic::Severity::Error ? "error" : "warning"; })
      .def_property_readonly("file", [](const PyDiagnostic& d) { return d.d.where.file; })
      .def_property_readonly("line", [](const PyDiagnostic& d) { return d.d.where.line; })
      .def_property_readonly("column", [](const PyDiagnostic& d) { return d.d.where.column; })
      .def_property_readonly("node", [](const PyDiagnostic& d) { return d.d.node; })
      .def_property_readonly(
          "parameter", [](const PyDiagnostic& d) { return d.d.param; },
          "The parameter or port named (see is_port); '' when none")
      .def_property_readonly("is_port", [](const PyDiagnostic& d) { return d.d.is_port; })
      .def_property_readonly("message", [](const PyDiagnostic& d) { return d.d.message; })
      .def_property_readonly("hint", [](const PyDiagnostic& d) { return d.d.hint; })
      .def("__str__", [](const PyDiagnostic& d) { return d.d.str(); })
      .def("__repr__", [](const PyDiagnostic& d) { return "<gemflow.Diagnostic " + d.d.str() + ">"; });

  py::class_<PyEvent>(m, "RunEvent", "An event of a running workflow, given to run(progress=...)")
      .def_readonly("kind", &PyEvent::kind, "'state', 'progress' or 'log'")
      .def_readonly("node", &PyEvent::node)
      .def_readonly("state", &PyEvent::state)
      .def_readonly("progress", &PyEvent::progress, "[0, 1] for 'progress'")
      .def_readonly("message", &PyEvent::message)
      .def_readonly("level", &PyEvent::level)
      .def("__repr__", [](const PyEvent& e) {
        return "<gemflow.RunEvent " + e.kind + " " + e.node + " " +
               (e.kind == "state"      ? e.state
                : e.kind == "progress" ? std::to_string(e.progress)
                                       : e.level) +
               " " + e.message + ">";
      });

  py::class_<PyWorkflow>(m, "Workflow")
      .def(py::init([](const std::string& name) {
             PyWorkflow w;
             w.wf.name = name;
             return w;
           }),
           py::arg("name") = "")
      .def_static(
          "load",
          [](const fs::path& file) {
            LoadResult r = load_workflow(file, host().registry);
            std::optional<PyWorkflow> w;
            if (r.workflow) {
              w.emplace();
              w->wf = std::move(*r.workflow);
              w->loaded = r.diagnostics;
            }
            return py::make_tuple(w ? py::cast(std::move(*w)) : py::object(py::none()), wrap(r.diagnostics));
          },
          py::arg("file"))
      .def_property(
          "name", [](const PyWorkflow& w) { return w.wf.name; },
          [](PyWorkflow& w, const std::string& s) {
            w.wf.name = s;
            w.loaded.reset();
          })
      .def_property(
          "description", [](const PyWorkflow& w) { return w.wf.description; },
          [](PyWorkflow& w, const std::string& s) { w.wf.description = s; })
      .def_property_readonly("file", [](const PyWorkflow& w) { return w.wf.file.string(); })
      .def("validate", [](const PyWorkflow& w) { return wrap(w.loaded ? *w.loaded : validate(w.wf, host().registry)); })
      .def("node_ids",
           [](const PyWorkflow& w) {
             std::vector<std::string> ids;
             for (const auto& n : w.wf.nodes) ids.push_back(n.id);
             return ids;
           })
      .def("node_type",
           [](const PyWorkflow& w, const std::string& id) {
             const NodeInstance* n = w.wf.find(id);
             if (!n) throw py::key_error("no node '" + id + "' in the workflow");
             return n->type;
           })
      .def("params",
           [](const PyWorkflow& w, const std::string& id) {
             const NodeInstance* n = w.wf.find(id);
             if (!n) throw py::key_error("no node '" + id + "' in the workflow");
             py::dict d;
             for (const auto& [k, v] : n->params) d[py::str(k)] = py_param(v);
             return d;
           })
      .def("links",
           [](const PyWorkflow& w) {
             std::vector<std::string> l;
             for (const auto& x : w.wf.links) l.push_back(x.str());
             return l;
           })
      .def(
          "add_node",
          [](PyWorkflow& w, const std::string& id, const std::string& type) {
            const NodeEntry& e = entry_of(type);
            if (id.empty() || id.find_first_of(". \t\n") != std::string::npos)
              throw py::value_error("node id '" + id + "': a non-empty name without dots or spaces");
            if (w.wf.find(id)) throw py::value_error("the workflow has a node '" + id + "' already");
            NodeInstance n;
            n.id = id;
            n.type = type;
            n.type_version = e.spec.info.version;
            w.wf.nodes.push_back(std::move(n));
            w.loaded.reset();
          },
          py::arg("id"), py::arg("type"))
      .def(
          "set_param",
          [](PyWorkflow& w, const std::string& id, const std::string& name, const py::handle& value) {
            NodeInstance* n = w.wf.find(id);
            if (!n) throw py::key_error("no node '" + id + "' in the workflow");
            const NodeEntry& e = entry_of(n->type);
            const ParamSpec* ps = e.spec.param(name);
            const Where where{"node '" + id + "', parameter '" + name + "'"};
            if (!ps) {
              std::vector<std::string> names;
              for (const auto& p : e.spec.params) names.push_back(p.name);
              const std::string near = nearest_name(name, names);
              where.value_error("no such parameter of " + n->type +
                                (near.empty() ? "" : " (did you mean '" + near + "'?)"));
            }
            ParamValue v = param_value(value, where);
            if (auto why = ps->check(v)) where.value_error(*why);
            if (ps->kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
              v = static_cast<double>(std::get<std::int64_t>(v));
            n->set_param(name, std::move(v));
            w.loaded.reset();
          },
          py::arg("node"), py::arg("param"), py::arg("value"))
      .def(
          "link",
          [](PyWorkflow& w, const std::string& from, const std::string& to) {
            Link l;
            std::tie(l.from_node, l.from_port) = split_port(from, "link source");
            std::tie(l.to_node, l.to_port) = split_port(to, "link target");
            for (const auto& [node, port, out] :
                 {std::tuple{l.from_node, l.from_port, true}, std::tuple{l.to_node, l.to_port, false}}) {
              const NodeInstance* n = w.wf.find(node);
              if (!n) throw py::value_error("link " + l.str() + ": no node '" + node + "' in the workflow");
              const NodeSpec& s = entry_of(n->type).spec;
              if (!(out ? s.output(port) : s.input(port))) {
                std::string names;
                for (const auto& p : out ? s.outputs : s.inputs) names += (names.empty() ? "" : ", ") + p.name;
                throw py::value_error("link " + l.str() + ": " + n->type + " has no " + (out ? "output" : "input") +
                                      " '" + port + "' (" + (out ? "outputs: " : "inputs: ") +
                                      (names.empty() ? "none" : names) + ")");
              }
            }
            w.wf.links.push_back(std::move(l));
            w.loaded.reset();
          },
          py::arg("source"), py::arg("target"))
      .def("to_yaml", [](const PyWorkflow& w) { return to_yaml(w.wf); })
      .def(
          "save",
          [](PyWorkflow& w, const fs::path& file) {
            save_workflow(w.wf, file);
            w.wf.file = fs::absolute(file);
          },
          py::arg("file"))
      .def(
          "run",
          [](PyWorkflow& w, const py::dict& o, const py::object& progress) {
            PyRunOptions opt;
            opt.sets = o["sets"].cast<std::vector<std::string>>();
            opt.device = o["device"].cast<std::string>();
            if (!o["out"].is_none()) opt.out = o["out"].cast<fs::path>();
            if (!o["cache"].is_none()) opt.cache = o["cache"].cast<fs::path>();
            opt.use_cache = o["use_cache"].cast<bool>();
            opt.until = o["until"].cast<std::string>();
            opt.jobs = o["jobs"].cast<int>();
            return PyRun(w, std::move(opt), progress).run();
          },
          py::arg("options"), py::arg("progress"));
}
