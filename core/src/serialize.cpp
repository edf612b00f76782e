// Serial<T> of the SDK's standard types (gemflow/serialize.hpp). The static_asserts on sizeof
// fail the build when a type gains a field, so that its encoding (and version) is revisited.
#include "gemflow/serialize.hpp"

#include "gemflow/types.hpp"

namespace gemflow {
namespace {

template <class T>
void write_matrix(BinaryWriter& w, const Matrix<T>& m) {
  w.size(m.rows());
  w.size(m.cols());
  w.size(m.size());
  const std::vector<T> data(m.data(), m.data() + m.size());
  w.block(data);
}

template <class T>
Matrix<T> read_matrix(BinaryReader& r) {
  const auto rows = r.get<std::uint64_t>("matrix rows");
  const auto cols = r.get<std::uint64_t>("matrix columns");
  (void)r.get<std::uint64_t>("matrix size");
  std::vector<T> data = r.block<T>("matrix values");
  if (cols != 0 && rows > data.size() / cols) throw SerialError("corrupt data: matrix shape and values differ");
  if (rows * cols != data.size()) throw SerialError("corrupt data: matrix shape and values differ");
  return Matrix<T>(rows, cols, std::move(data));
}

template <class T>
void write_one(BinaryWriter& w, const T& v) {
  Serial<T>::write(w, v);
}

}  // namespace

// ---- Matrix ----
void Serial<Matrix<double>>::write(BinaryWriter& w, const Matrix<double>& m) { write_matrix(w, m); }
Matrix<double> Serial<Matrix<double>>::read(BinaryReader& r) { return read_matrix<double>(r); }
void Serial<Matrix<float>>::write(BinaryWriter& w, const Matrix<float>& m) { write_matrix(w, m); }
Matrix<float> Serial<Matrix<float>>::read(BinaryReader& r) { return read_matrix<float>(r); }

// ---- DistanceBounds ----
static_assert(sizeof(DistanceBounds) == 3 * sizeof(Matrix<double>) + 2 * sizeof(std::vector<int>),
              "DistanceBounds changed: update Serial<DistanceBounds>");
void Serial<DistanceBounds>::write(BinaryWriter& w, const DistanceBounds& b) {
  write_matrix(w, b.lower);
  write_matrix(w, b.upper);
  w.strings(b.labels);
  w.block(b.atom_index);
  write_matrix(w, b.restraint);
}
DistanceBounds Serial<DistanceBounds>::read(BinaryReader& r) {
  DistanceBounds b;
  b.lower = read_matrix<double>(r);
  b.upper = read_matrix<double>(r);
  b.labels = r.strings("labels");
  b.atom_index = r.block<std::size_t>("atom indices");
  b.restraint = read_matrix<int>(r);
  return b;
}

// ---- Structure ----
static_assert(sizeof(Atom) == 6 * sizeof(std::string) + 4 * sizeof(int) + 2 * sizeof(double),
              "Atom changed: update Serial<Structure>");
void Serial<Structure>::write(BinaryWriter& w, const Structure& s) {
  w.str(s.title);
  w.size(s.atoms.size());
  for (const Atom& a : s.atoms) {
    w.str(a.name);
    w.str(a.element);
    w.str(a.residue);
    w.put<std::int32_t>(a.residue_number);
    w.str(a.insertion);
    w.str(a.chain);
    w.str(a.segment);
    w.put<std::uint8_t>(a.hetero ? 1 : 0);
    w.put<std::int32_t>(a.serial);
    w.put(a.occupancy);
    w.put(a.b_factor);
  }
  w.size(s.models.size());
  for (const auto& m : s.models) w.block(m);
  w.block(s.bonds);
}
Structure Serial<Structure>::read(BinaryReader& r) {
  Structure s;
  s.title = r.str("title");
  s.atoms.resize(r.size("atoms", 6 * 8 + 25));
  for (Atom& a : s.atoms) {
    a.name = r.str("atom name");
    a.element = r.str("element");
    a.residue = r.str("residue");
    a.residue_number = r.get<std::int32_t>("residue number");
    a.insertion = r.str("insertion code");
    a.chain = r.str("chain");
    a.segment = r.str("segment");
    a.hetero = r.get<std::uint8_t>("hetero flag") != 0;
    a.serial = r.get<std::int32_t>("serial");
    a.occupancy = r.get<double>("occupancy");
    a.b_factor = r.get<double>("B factor");
  }
  s.models.resize(r.size("models", 8));
  for (auto& m : s.models) m = r.block<Vec3>("coordinates");
  s.bonds = r.block<std::array<std::size_t, 2>>("bonds");
  return s;
}

// ---- RestraintSet ----
static_assert(sizeof(AtomSelector) == 3 * sizeof(std::string) + 2 * sizeof(std::size_t),  // two padded ints
              "AtomSelector changed: update Serial<RestraintSet>");
static_assert(sizeof(DistanceRestraint) == 8 + sizeof(std::string) + sizeof(std::vector<int>) + 5 * sizeof(double),
              "DistanceRestraint changed: update Serial<RestraintSet>");
static_assert(sizeof(DihedralRestraint) ==
                  8 + 2 * sizeof(std::string) + 4 * sizeof(AtomSelector) + 4 * sizeof(std::size_t) + 4 * sizeof(double),
              "DihedralRestraint changed: update Serial<RestraintSet>");
namespace {
void write_selector(BinaryWriter& w, const AtomSelector& s) {
  w.str(s.chain);
  w.put<std::int32_t>(s.residue_number);
  w.str(s.residue);
  w.str(s.atom);
  w.put<std::int32_t>(s.line);
}
AtomSelector read_selector(BinaryReader& r) {
  AtomSelector s;
  s.chain = r.str("chain");
  s.residue_number = r.get<std::int32_t>("residue number");
  s.residue = r.str("residue");
  s.atom = r.str("atom");
  s.line = r.get<std::int32_t>("line");
  return s;
}
}  // namespace
void Serial<RestraintSet>::write(BinaryWriter& w, const RestraintSet& s) {
  w.str(s.source);
  w.str(s.format);
  w.size(s.restraints.size());
  for (const auto& d : s.restraints) {
    w.put<std::int32_t>(d.id);
    w.str(d.origin);
    w.size(d.alternatives.size());
    for (const auto& a : d.alternatives) {
      write_selector(w, a.a);
      write_selector(w, a.b);
      w.block(a.atoms_a);
      w.block(a.atoms_b);
    }
    w.put(d.lower);
    w.put(d.upper);
    w.put(d.target);
    w.put(d.weight);
    w.put(d.pseudo_correction);
  }
  w.size(s.dihedrals.size());
  for (const auto& d : s.dihedrals) {
    w.put<std::int32_t>(d.id);
    w.str(d.origin);
    w.str(d.name);
    for (const auto& a : d.atoms) write_selector(w, a);
    for (auto i : d.atom_index) w.put<std::uint64_t>(i);
    w.put(d.lower);
    w.put(d.upper);
    w.put(d.target);
    w.put(d.weight);
  }
  w.strings(s.warnings);
  w.size(s.skipped);
}
RestraintSet Serial<RestraintSet>::read(BinaryReader& r) {
  RestraintSet s;
  s.source = r.str("source");
  s.format = r.str("format");
  s.restraints.resize(r.size("restraints", 60));
  for (auto& d : s.restraints) {
    d.id = r.get<std::int32_t>("restraint id");
    d.origin = r.str("origin");
    d.alternatives.resize(r.size("alternatives", 2 * 32 + 16));
    for (auto& a : d.alternatives) {
      a.a = read_selector(r);
      a.b = read_selector(r);
      a.atoms_a = r.block<std::size_t>("atoms");
      a.atoms_b = r.block<std::size_t>("atoms");
    }
    d.lower = r.get<double>("lower bound");
    d.upper = r.get<double>("upper bound");
    d.target = r.get<double>("target");
    d.weight = r.get<double>("weight");
    d.pseudo_correction = r.get<double>("pseudo-atom correction");
  }
  s.dihedrals.resize(r.size("dihedral restraints", 4 * 32 + 60));
  for (auto& d : s.dihedrals) {
    d.id = r.get<std::int32_t>("restraint id");
    d.origin = r.str("origin");
    d.name = r.str("dihedral name");
    for (auto& a : d.atoms) a = read_selector(r);
    for (auto& i : d.atom_index) i = r.get<std::uint64_t>("atom index");
    d.lower = r.get<double>("lower bound");
    d.upper = r.get<double>("upper bound");
    d.target = r.get<double>("target");
    d.weight = r.get<double>("weight");
  }
  s.warnings = r.strings("warnings");
  s.skipped = r.get<std::uint64_t>("skipped count");
  return s;
}

// ---- Table ----
void Serial<Table>::write(BinaryWriter& w, const Table& t) {
  w.strings(t.columns);
  w.size(t.rows.size());
  for (const auto& row : t.rows) {
    w.size(row.size());
    for (const auto& c : row) {
      w.put<std::uint8_t>(static_cast<std::uint8_t>(c.index()));
      if (const auto* d = std::get_if<double>(&c)) w.put(*d);
      else if (const auto* i = std::get_if<std::int64_t>(&c)) w.put(*i);
      else w.str(std::get<std::string>(c));
    }
  }
}
Table Serial<Table>::read(BinaryReader& r) {
  Table t;
  t.columns = r.strings("columns");
  t.rows.resize(r.size("rows", 8));
  for (auto& row : t.rows) {
    row.resize(r.size("cells", 9));
    for (auto& c : row) {
      switch (r.get<std::uint8_t>("cell kind")) {
        case 0: c = r.get<double>("number"); break;
        case 1: c = r.get<std::int64_t>("integer"); break;
        case 2: c = r.str("text"); break;
        default: throw SerialError("corrupt data: unknown table cell kind");
      }
    }
  }
  return t;
}

// ---- MoleculeSet ----
static_assert(sizeof(MoleculeAtom) == sizeof(std::string) + 3 * sizeof(double) + 8,
              "MoleculeAtom changed: update Serial<MoleculeSet>");
static_assert(sizeof(Molecule) == 2 * sizeof(std::string) + 2 * sizeof(std::vector<int>),
              "Molecule changed: update Serial<MoleculeSet>");
void Serial<MoleculeSet>::write(BinaryWriter& w, const MoleculeSet& s) {
  w.size(s.molecules.size());
  for (const auto& m : s.molecules) {
    w.str(m.name);
    w.str(m.source);
    w.size(m.atoms.size());
    for (const auto& a : m.atoms) {
      w.str(a.element);
      for (double x : a.xyz) w.put(x);
      w.put<std::int32_t>(a.charge);
    }
    w.size(m.bonds.size());
    for (const auto& b : m.bonds) {
      w.size(b.a);
      w.size(b.b);
      w.put<std::int32_t>(b.order);
    }
  }
}
MoleculeSet Serial<MoleculeSet>::read(BinaryReader& r) {
  MoleculeSet s;
  s.molecules.resize(r.size("molecules", 32));
  for (auto& m : s.molecules) {
    m.name = r.str("name");
    m.source = r.str("source");
    m.atoms.resize(r.size("atoms", 36));
    for (auto& a : m.atoms) {
      a.element = r.str("element");
      for (double& x : a.xyz) x = r.get<double>("coordinate");
      a.charge = r.get<std::int32_t>("charge");
    }
    m.bonds.resize(r.size("bonds", 20));
    for (auto& b : m.bonds) {
      b.a = r.get<std::uint64_t>("bond atom");
      b.b = r.get<std::uint64_t>("bond atom");
      b.order = r.get<std::int32_t>("bond order");
    }
  }
  return s;
}

// ---- Image ----
static_assert(sizeof(Image) == 3 * 8 + 2 * sizeof(std::vector<int>), "Image changed: update Serial<Image>");
void Serial<Image>::write(BinaryWriter& w, const Image& im) {
  w.size(im.width);
  w.size(im.height);
  w.put<std::uint8_t>(im.format == Image::Format::RGBA32F ? 0 : 1);
  w.block(im.f32);
  w.block(im.u8);
}
Image Serial<Image>::read(BinaryReader& r) {
  Image im;
  im.width = r.get<std::uint64_t>("width");
  im.height = r.get<std::uint64_t>("height");
  im.format = r.get<std::uint8_t>("format") == 0 ? Image::Format::RGBA32F : Image::Format::RGBA8;
  im.f32 = r.block<float>("pixels");
  im.u8 = r.block<std::uint8_t>("pixels");
  if (auto bad = im.validate()) throw SerialError("corrupt data: " + *bad);
  return im;
}

// ---- Signal, Scores, Segmentation ----
static_assert(sizeof(Signal) == sizeof(Matrix<double>) + 2 * sizeof(double) + 4 * sizeof(std::vector<int>),
              "Signal changed: update Serial<Signal>");
void Serial<Signal>::write(BinaryWriter& w, const Signal& s) {
  write_matrix(w, s.samples);
  w.put(s.sample_rate);
  w.put(s.start_time);
  w.block(s.times);
  w.strings(s.channels);
  w.strings(s.units);
  w.block(s.valid);
}
Signal Serial<Signal>::read(BinaryReader& r) {
  Signal s;
  s.samples = read_matrix<double>(r);
  s.sample_rate = r.get<double>("sample rate");
  s.start_time = r.get<double>("start time");
  s.times = r.block<double>("times");
  s.channels = r.strings("channels");
  s.units = r.strings("units");
  s.valid = r.block<std::uint8_t>("validity flags");
  return s;
}

static_assert(sizeof(Scores) == sizeof(Matrix<double>) + sizeof(std::vector<int>) + sizeof(double),
              "Scores changed: update Serial<Scores>");
void Serial<Scores>::write(BinaryWriter& w, const Scores& s) {
  write_matrix(w, s.scores);
  w.strings(s.labels);
  w.put(s.sample_rate);
}
Scores Serial<Scores>::read(BinaryReader& r) {
  Scores s;
  s.scores = read_matrix<double>(r);
  s.labels = r.strings("labels");
  s.sample_rate = r.get<double>("sample rate");
  return s;
}

static_assert(sizeof(Segment) == 4 * 8, "Segment changed: update Serial<Segmentation>");
static_assert(sizeof(Segmentation) == 8 + 2 * sizeof(std::vector<int>) + sizeof(double),
              "Segmentation changed: update Serial<Segmentation>");
void Serial<Segmentation>::write(BinaryWriter& w, const Segmentation& s) {
  w.size(s.length);
  w.strings(s.labels);
  w.block(s.segments);
  w.put(s.sample_rate);
}
Segmentation Serial<Segmentation>::read(BinaryReader& r) {
  Segmentation s;
  s.length = r.get<std::uint64_t>("length");
  s.labels = r.strings("labels");
  s.segments = r.block<Segment>("segments");
  s.sample_rate = r.get<double>("sample rate");
  return s;
}

// ---- TriMesh, CirclePacking ----
static_assert(sizeof(TriMesh) == 4 * sizeof(std::vector<int>), "TriMesh changed: update Serial<TriMesh>");
void Serial<TriMesh>::write(BinaryWriter& w, const TriMesh& m) {
  w.block(m.vertices);
  w.block(m.faces);
  w.size(m.boundary.size());
  for (const auto& loop : m.boundary) w.block(loop);
  w.block(m.uv);
}
TriMesh Serial<TriMesh>::read(BinaryReader& r) {
  TriMesh m;
  m.vertices = r.block<std::array<double, 3>>("vertices");
  m.faces = r.block<std::array<TriMesh::Index, 3>>("faces");
  m.boundary.resize(r.size("boundary loops", 8));
  for (auto& loop : m.boundary) loop = r.block<TriMesh::Index>("boundary loop");
  m.uv = r.block<std::array<double, 2>>("texture coordinates");
  return m;
}

static_assert(sizeof(CirclePacking) == 8 + 4 * sizeof(std::vector<int>),
              "CirclePacking changed: update Serial<CirclePacking>");
void Serial<CirclePacking>::write(BinaryWriter& w, const CirclePacking& p) {
  w.put<std::uint8_t>(p.geometry == CirclePacking::Geometry::Euclidean ? 0 : 1);
  w.block(p.radii);
  w.block(p.centres);
  w.block(p.faces);
  w.block(p.boundary);
}
CirclePacking Serial<CirclePacking>::read(BinaryReader& r) {
  CirclePacking p;
  p.geometry =
      r.get<std::uint8_t>("geometry") == 0 ? CirclePacking::Geometry::Euclidean : CirclePacking::Geometry::Hyperbolic;
  p.radii = r.block<double>("radii");
  p.centres = r.block<std::array<double, 2>>("centres");
  p.faces = r.block<std::array<CirclePacking::Index, 3>>("faces");
  p.boundary = r.block<std::uint8_t>("boundary flags");
  return p;
}

}  // namespace gemflow
