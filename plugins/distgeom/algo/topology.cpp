// Protein topology from the sequence (see gemflow/distgeom/topology.hpp).
#include "gemflow/distgeom/topology.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gemflow/distgeom/geometry.hpp"

namespace gemflow::distgeom {
namespace {

using P = std::array<double, 3>;

P sub(const P& a, const P& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
P add(const P& a, const P& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
P scale(const P& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const P& a, const P& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
P cross(const P& a, const P& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
P unit(const P& a) { return scale(a, 1.0 / std::sqrt(dot(a, a))); }
double norm(const P& a) { return std::sqrt(dot(a, a)); }
double angle_deg(const P& a, const P& b, const P& c) {  // at b
  const P u = unit(sub(a, b)), v = unit(sub(c, b));
  return std::acos(std::clamp(dot(u, v), -1.0, 1.0)) * 180.0 / std::numbers::pi;
}

// Engh & Huber, Acta Cryst. A47 (1991) 392, Table 3 (peptide unit).
constexpr double kPeptideCN = 1.329;    // C–N
constexpr double kAngleCACN = 116.2;    // CA–C–N
constexpr double kAngleCNCA = 121.7;    // C–N–CA
constexpr double kAngleCACO = 120.8;    // CA–C–O (= 360 − CA–C–N − O–C–N 123.0)
constexpr double kBondCO = 1.231;       // C=O
constexpr double kBondCOO = 1.249;      // carboxylate C–O (Engh & Huber 1991, CCOO)
constexpr double kChainGap = 40.0;      // Å between chains (y)
constexpr double kProlinePhi = -63.0;   // degrees
constexpr double kLigandGap = 20.0;     // Å between a chain's start and its ligands (z)
constexpr double kAmideHAngle = 120.0;  // C–N–H of a planar primary amide (NH2 cap)

[[noreturn]] void fail(const ChainSequence& c, const SequenceResidue& r, const std::string& what) {
  std::ostringstream m;
  m << "chain '" << c.chain << "' residue " << r.number << " " << r.name << ": " << what;
  throw std::invalid_argument(m.str());
}

std::set<std::string> removed_atoms(const ChainSequence& c, const SequenceResidue& r, const ResidueTemplate& t,
                                    Histidine his) {
  std::set<std::string> out;
  // Asp and Glu as carboxylates (neutral pH); the CCD entries are the protonated acids.
  if (t.id == "ASP") out.insert("HD2");
  if (t.id == "GLU") out.insert("HE2");
  if (t.id == "HIS") {
    if (his == Histidine::Delta) out.insert("HE2");
    if (his == Histidine::Epsilon) out.insert("HD1");
  }
  if (r.variant.empty() || r.variant == "." || r.variant == "?") return out;
  std::stringstream ss(r.variant);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    tok.erase(std::remove_if(tok.begin(), tok.end(), [](unsigned char ch) { return std::isspace(ch); }), tok.end());
    if (tok.empty()) continue;
    if (tok[0] != '-' || tok.size() < 2)
      fail(c, r, "variant '" + r.variant + "': only '-ATOM' tokens (atoms removed) are understood");
    const std::string name = tok.substr(1);
    // A variant that re-removes the HIS proton already dropped by the default is fine.
    if (t.find(name) == t.atoms.size())
      fail(c, r, "variant '" + r.variant + "' removes " + name + ", not an atom of " + t.id);
    out.insert(name);
  }
  // A variant naming one histidine proton sets the tautomer: the other proton comes back.
  if (t.id == "HIS") {
    const bool d = r.variant.find("-HD1") != std::string::npos, e = r.variant.find("-HE2") != std::string::npos;
    if (d && !e) out.erase("HE2");
    if (e && !d) out.erase("HD1");
  }
  return out;
}

// Heavy-atom and hydrogen neighbours of template atom k.
std::vector<std::size_t> neighbours(const ResidueTemplate& t, std::size_t k) {
  std::vector<std::size_t> out;
  for (auto [i, j] : t.bonds) {
    if (i == k) out.push_back(j);
    if (j == k) out.push_back(i);
  }
  return out;
}

std::vector<double> flat(std::initializer_list<P> ps) {
  std::vector<double> v;
  for (const auto& p : ps) v.insert(v.end(), {p[0], p[1], p[2]});
  return v;
}

// One chain: the backbone of its amino acids first (an extended chain), then every residue's
// atoms in sequence order. Caps and ligands are placed relative to that backbone.
class ChainBuilder {
 public:
  ChainBuilder(MolecularTopology& out, const ChainSequence& c, const std::map<std::string, ResidueTemplate>& templates,
               const TopologyOptions& o, const P& origin)
      : out_(out), c_(c), o_(o), origin_(origin) {
    for (const auto& r : c.residues) {
      const auto it = templates.find(r.name);
      if (it == templates.end()) {
        std::string known;
        for (const auto& [id, t] : templates) known += (known.empty() ? "" : " ") + id;
        fail(c, r, "no residue template (there are: " + known + ")");
      }
      t_.push_back(&it->second);
      role_.push_back(residue_role(it->second));
    }
  }

  void build() {
    check_order();
    backbone();
    for (std::size_t i = 0; i < t_.size(); ++i) {
      switch (role_[i]) {
        case ResidueRole::AminoAcid: amino_acid(i); break;
        case ResidueRole::NCap: n_cap(i); break;
        case ResidueRole::CCap: c_cap(i); break;
        case ResidueRole::Ligand: ligand(i); break;
      }
    }
  }

 private:
  struct Backbone {
    P n{}, ca{}, c{};
  };

  const SequenceResidue& res(std::size_t i) const { return c_.residues[i]; }
  bool is_aa(std::size_t i) const { return i < role_.size() && role_[i] == ResidueRole::AminoAcid; }

  // One run of amino acids; caps at its ends; ligands outside it.
  void check_order() const {
    std::size_t first = role_.size(), last = 0;
    for (std::size_t i = 0; i < role_.size(); ++i)
      if (is_aa(i)) {
        first = std::min(first, i);
        last = i;
      }
    for (std::size_t i = 0; i < role_.size(); ++i) {
      if (role_[i] == ResidueRole::NCap && !(first < role_.size() && i + 1 == first))
        fail(c_, res(i), "an N-terminal cap must come right before the chain's first amino acid");
      if (role_[i] == ResidueRole::CCap && !(first < role_.size() && i == last + 1))
        fail(c_, res(i), "a C-terminal cap must come right after the chain's last amino acid");
      if (first < role_.size() && i > first && i < last && !is_aa(i))
        fail(c_, res(i),
             "not an amino acid, between amino acids " + std::to_string(res(first).number) + " and " +
                 std::to_string(res(last).number) + " (list ligands before or after the polymer)");
    }
  }

  // N, CA, C of every amino acid: an extended chain from the origin.
  void backbone() {
    bb_.resize(t_.size());
    bool first = true;
    Backbone prev;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      if (!is_aa(i)) continue;
      const ResidueTemplate& t = *t_[i];
      const std::size_t tn = t.find("N"), tca = t.find("CA"), tc = t.find("C");
      if (tn == t.atoms.size() || tca == t.atoms.size() || tc == t.atoms.size() || t.find("O") == t.atoms.size() ||
          t.bonds.empty())
        fail(c_, res(i), "template " + t.id + " lacks N, CA, C, O or bonds");
      const P TN = t.atoms[tn].xyz, TCA = t.atoms[tca].xyz, TC = t.atoms[tc].xyz;
      const double b_nca = norm(sub(TCA, TN)), b_cac = norm(sub(TC, TCA)), a_ncac = angle_deg(TN, TCA, TC);
      Backbone b;
      if (first) {
        b.n = origin_;
        b.ca = add(origin_, P{b_nca, 0, 0});
        const double th = (180.0 - a_ncac) * std::numbers::pi / 180.0;
        b.c = add(b.ca, P{b_cac * std::cos(th), b_cac * std::sin(th), 0});
      } else {
        b.n = place_atom(prev.n, prev.ca, prev.c, kPeptideCN, kAngleCACN, o_.psi);
        b.ca = place_atom(prev.ca, prev.c, b.n, b_nca, kAngleCNCA, o_.omega);
        // a proline's ring fixes φ near −63° (its CD must lie in the C(i−1)–N–CA plane)
        b.c = place_atom(prev.c, b.n, b.ca, b_cac, a_ncac, phi(i));
      }
      bb_[i] = b;
      prev = b;
      first = false;
    }
  }

  double phi(std::size_t i) const { return t_[i]->id == "PRO" ? kProlinePhi : o_.phi; }

  P pos(std::size_t atom) const { return {out_.xyz[3 * atom], out_.xyz[3 * atom + 1], out_.xyz[3 * atom + 2]}; }
  void move(std::size_t atom, const P& x) {
    for (int e = 0; e < 3; ++e) out_.xyz[3 * atom + e] = x[e];
  }
  std::size_t add_atom(std::size_t i, const std::string& name, const std::string& element, const P& x) {
    out_.atoms.push_back({element, name, res(i).name, c_.chain, res(i).number});
    out_.xyz.insert(out_.xyz.end(), {x[0], x[1], x[2]});
    return out_.atoms.size() - 1;
  }
  void bond(std::size_t a, std::size_t b) { out_.bonds.push_back({std::min(a, b), std::max(a, b)}); }

  // Template atoms where `keep`, rigidly moved by the superposition of template atoms `fit`
  // onto `target`; the template's bonds among them. Returns the template → built index map.
  template <class Keep>
  std::vector<std::size_t> place_template(std::size_t i, std::initializer_list<std::size_t> fit,
                                          const std::vector<double>& target, Keep keep) {
    const ResidueTemplate& t = *t_[i];
    std::vector<double> mob;
    for (auto k : fit) mob.insert(mob.end(), {t.atoms[k].xyz[0], t.atoms[k].xyz[1], t.atoms[k].xyz[2]});
    const Superposition sp = kabsch(mob, target);
    std::vector<std::size_t> index(t.atoms.size(), SIZE_MAX);
    for (std::size_t k = 0; k < t.atoms.size(); ++k) {
      if (!keep(k)) continue;
      std::vector<double> x{t.atoms[k].xyz[0], t.atoms[k].xyz[1], t.atoms[k].xyz[2]};
      distgeom::apply(sp, x);
      index[k] = add_atom(i, t.atoms[k].name, t.atoms[k].element, {x[0], x[1], x[2]});
    }
    for (auto [a, b] : t.bonds)
      if (index[a] != SIZE_MAX && index[b] != SIZE_MAX) bond(index[a], index[b]);
    return index;
  }

  double n_h_length(const ResidueTemplate& t, std::size_t tn) const {
    for (auto h : neighbours(t, tn))
      if (t.atoms[h].element == "H") return norm(sub(t.atoms[h].xyz, t.atoms[tn].xyz));
    return 1.01;
  }

  void amino_acid(std::size_t i) {
    const ResidueTemplate& t = *t_[i];
    const SequenceResidue& r = res(i);
    const Backbone& b = bb_[i];
    const std::size_t tn = t.find("N"), tca = t.find("CA"), tc = t.find("C");
    const bool after_aa = i > 0 && is_aa(i - 1), after_cap = i > 0 && role_[i - 1] == ResidueRole::NCap;
    const bool n_free = !after_aa && !after_cap;
    const bool c_free = !is_aa(i + 1) && !(i + 1 < role_.size() && role_[i + 1] == ResidueRole::CCap);
    const bool pro = t.id == "PRO";
    const auto removed = removed_atoms(c_, r, t, o_.histidine);
    const auto n_h = neighbours(t, tn);
    const std::vector<std::size_t> index = place_template(i, {tn, tca, tc}, flat({b.n, b.ca, b.c}), [&](std::size_t k) {
      const TemplateAtom& a = t.atoms[k];
      if (removed.count(a.name)) return false;
      // amide / terminal hydrogens are placed below
      if (a.element == "H" && std::find(n_h.begin(), n_h.end(), k) != n_h.end()) return false;
      return !a.leaving || (c_free && a.name == "OXT");
    });
    const std::size_t n_index = index[tn];
    const double b_nh = n_h_length(t, tn);
    if (n_free) {
      terminal_hydrogens(i, b, index, n_index, b_nh);
    } else {
      bond(prev_c_index_, n_index);
      // the previous residue's carbonyl O in the C–N plane, trans to N (a cap placed its own)
      if (after_aa) move(prev_o_index_, place_atom(b.n, bb_[i - 1].ca, bb_[i - 1].c, kBondCO, kAngleCACO, 180.0));
      if (!pro && !removed.count("H")) {
        // amide H on the external bisector of C–N–CA
        const P h = add(b.n, scale(unit(add(unit(sub(b.n, prev_c_)), unit(sub(b.n, b.ca)))), b_nh));
        bond(n_index, add_atom(i, "H", "H", h));
      }
    }
    carboxylates(t, index);
    prev_c_ = b.c;
    prev_c_index_ = index[tc];
    const std::size_t to = t.find("O");
    if (index[to] == SIZE_MAX) fail(c_, r, "template " + t.id + " lacks O");
    prev_o_index_ = index[to];
  }

  void terminal_hydrogens(std::size_t i, const Backbone& b, const std::vector<std::size_t>& index, std::size_t n_index,
                          double b_nh) {
    const ResidueTemplate& t = *t_[i];
    if (t.id == "PRO") {
      // NH2+: two hydrogens tetrahedral to CA and CD (names H2, H3 as in the PDB)
      const std::size_t tcd = t.find("CD");
      if (tcd == t.atoms.size() || index[tcd] == SIZE_MAX) fail(c_, res(i), "proline template without CD");
      const P u = unit(sub(b.ca, b.n)), v = unit(sub(pos(index[tcd]), b.n));
      const P m = scale(unit(add(u, v)), -1.0), p = unit(cross(u, v));
      const double half = 109.5 / 2.0 * std::numbers::pi / 180.0;
      const char* names[2] = {"H2", "H3"};
      for (int s = 0; s < 2; ++s) {
        const P h = add(b.n, scale(add(scale(m, std::cos(half)), scale(p, (s ? -1 : 1) * std::sin(half))), b_nh));
        bond(n_index, add_atom(i, names[s], "H", h));
      }
    } else {
      // NH3+: staggered on C–CA–N (torsions 60, 180, -60)
      const double tors[3] = {60.0, 180.0, -60.0};
      const char* names[3] = {"H1", "H2", "H3"};
      for (int s = 0; s < 3; ++s)
        bond(n_index, add_atom(i, names[s], "H", place_atom(b.c, b.ca, b.n, b_nh, 109.5, tors[s])));
    }
  }

  // Carboxylates (Asp, Glu, C-terminus): the CCD entries are the acids (C=O 1.21, C–OH 1.31 Å);
  // both C–O become the carboxylate's, along the template directions.
  void carboxylates(const ResidueTemplate& t, const std::vector<std::size_t>& index) {
    const std::pair<const char*, std::array<const char*, 2>> coo[] = {
        {"CG", {"OD1", "OD2"}}, {"CD", {"OE1", "OE2"}}, {"C", {"O", "OXT"}}};
    for (const auto& [cn, os] : coo) {
      const std::size_t k = t.find(cn), k1 = t.find(os[0]), k2 = t.find(os[1]);
      if (k == t.atoms.size() || k1 == t.atoms.size() || k2 == t.atoms.size()) continue;
      if (index[k] == SIZE_MAX || index[k1] == SIZE_MAX || index[k2] == SIZE_MAX) continue;
      if ((t.id != "ASP" && cn == std::string("CG")) || (t.id != "GLU" && cn == std::string("CD"))) continue;
      const P cx = pos(index[k]);
      for (std::size_t o_at : {index[k1], index[k2]}) move(o_at, add(cx, scale(unit(sub(pos(o_at), cx)), kBondCOO)));
    }
  }

  // The cap template's atom `name`, failing when absent.
  std::size_t cap_atom(std::size_t i, const std::string& name) const {
    const std::size_t k = t_[i]->find(name);
    if (k == t_[i]->atoms.size()) fail(c_, res(i), "cap template " + t_[i]->id + " lacks " + name);
    return k;
  }

  // ACE before amino acid i+1: its C where C(i−1) would be, CH3 where CA(i−1) would be, O trans
  // to N; the template moved rigidly onto those three atoms (built with its own C–CH3, C=O and
  // CH3–C–O, so the fit is exact).
  void n_cap(std::size_t i) {
    const ResidueTemplate& t = *t_[i];
    const Backbone& next = bb_[i + 1];
    const std::size_t tc = cap_atom(i, "C");
    std::size_t tme = t.atoms.size(), to = t.atoms.size(), th = t.atoms.size();
    for (auto k : neighbours(t, tc)) {
      if (t.atoms[k].element == "C") tme = k;
      if (t.atoms[k].element == "O") to = k;
      if (t.atoms[k].element == "H") th = k;
    }
    if (tme == t.atoms.size() || to == t.atoms.size())
      fail(c_, res(i), "cap template " + t.id + " lacks the C, O and CH3 of an acetyl group");
    const P TC = t.atoms[tc].xyz, TM = t.atoms[tme].xyz, TO = t.atoms[to].xyz;
    const P C = place_atom(next.c, next.ca, next.n, kPeptideCN, kAngleCNCA, phi(i + 1));
    const P M = place_atom(next.ca, next.n, C, norm(sub(TM, TC)), kAngleCACN, o_.omega);
    const P O = place_atom(next.n, M, C, norm(sub(TO, TC)), angle_deg(TM, TC, TO), 180.0);
    const auto removed = removed_atoms(c_, res(i), t, o_.histidine);
    // the aldehyde H of the CCD entry (acetaldehyde) is where the peptide N goes
    const auto index = place_template(i, {tc, tme, to}, flat({C, M, O}), [&](std::size_t k) {
      return k != th && !t.atoms[k].leaving && !removed.count(t.atoms[k].name);
    });
    prev_c_ = C;
    prev_c_index_ = index[tc];
  }

  // NME / NH2 after amino acid i−1: N where N(i+1) would be (the previous O trans to it); NME's
  // methyl C where CA(i+1) would be, the template moved rigidly onto N, C and one methyl H
  // (staggered); the amide hydrogens in the peptide plane.
  void c_cap(std::size_t i) {
    const ResidueTemplate& t = *t_[i];
    const Backbone& prev = bb_[i - 1];
    const std::size_t tn = cap_atom(i, "N");
    const P N = place_atom(prev.n, prev.ca, prev.c, kPeptideCN, kAngleCACN, o_.psi);
    move(prev_o_index_, place_atom(N, prev.ca, prev.c, kBondCO, kAngleCACO, 180.0));
    const auto removed = removed_atoms(c_, res(i), t, o_.histidine);
    std::size_t heavy = t.atoms.size();
    std::vector<std::size_t> hs;
    for (auto k : neighbours(t, tn)) {
      if (t.atoms[k].leaving || removed.count(t.atoms[k].name)) continue;
      if (t.atoms[k].element == "H") hs.push_back(k);
      else if (heavy == t.atoms.size()) heavy = k;
      else fail(c_, res(i), "cap template " + t.id + ": N with two heavy neighbours");
    }
    auto keep = [&](std::size_t k) {
      return !t.atoms[k].leaving && !removed.count(t.atoms[k].name) && std::find(hs.begin(), hs.end(), k) == hs.end();
    };
    std::vector<std::size_t> index;
    if (heavy != t.atoms.size()) {
      std::size_t ty = t.atoms.size();
      for (auto k : neighbours(t, heavy))
        if (k != tn) ty = k;
      if (ty == t.atoms.size() || hs.size() > 1)
        fail(c_, res(i), "cap template " + t.id + " is not an N-alkyl amide cap");
      const P TN = t.atoms[tn].xyz, TX = t.atoms[heavy].xyz, TY = t.atoms[ty].xyz;
      const P X = place_atom(prev.ca, prev.c, N, norm(sub(TX, TN)), kAngleCNCA, o_.omega);
      const P Y = place_atom(prev.c, N, X, norm(sub(TY, TX)), angle_deg(TN, TX, TY), 180.0);
      index = place_template(i, {tn, heavy, ty}, flat({N, X, Y}), keep);
      for (auto h : hs) {
        const P x = add(N, scale(unit(add(unit(sub(N, prev.c)), unit(sub(N, X)))), norm(sub(t.atoms[h].xyz, TN))));
        bond(index[tn], add_atom(i, t.atoms[h].name, "H", x));
      }
    } else {
      if (hs.size() > 2) fail(c_, res(i), "cap template " + t.id + " has more than two N hydrogens");
      index.assign(t.atoms.size(), SIZE_MAX);
      index[tn] = add_atom(i, t.atoms[tn].name, t.atoms[tn].element, N);
      const double tors[2] = {180.0, 0.0};  // trans, then cis to CA
      for (std::size_t s = 0; s < hs.size(); ++s) {
        const double len = norm(sub(t.atoms[hs[s]].xyz, t.atoms[tn].xyz));
        bond(index[tn],
             add_atom(i, t.atoms[hs[s]].name, "H", place_atom(prev.ca, prev.c, N, len, kAmideHAngle, tors[s])));
      }
    }
    bond(prev_c_index_, index[tn]);
  }

  // A ligand or ion: every atom of its template (ideal coordinates), below the chain's start.
  void ligand(std::size_t i) {
    const ResidueTemplate& t = *t_[i];
    const auto removed = removed_atoms(c_, res(i), t, o_.histidine);
    P centre{0, 0, 0};
    for (const auto& a : t.atoms) centre = add(centre, a.xyz);
    centre = scale(centre, 1.0 / static_cast<double>(std::max<std::size_t>(t.atoms.size(), 1)));
    const P at = add(origin_, P{0, 0, -kLigandGap * static_cast<double>(++ligands_)});
    std::vector<std::size_t> index(t.atoms.size(), SIZE_MAX);
    for (std::size_t k = 0; k < t.atoms.size(); ++k)
      if (!removed.count(t.atoms[k].name))
        index[k] = add_atom(i, t.atoms[k].name, t.atoms[k].element, add(at, sub(t.atoms[k].xyz, centre)));
    for (auto [a, b] : t.bonds)
      if (index[a] != SIZE_MAX && index[b] != SIZE_MAX) bond(index[a], index[b]);
  }

  MolecularTopology& out_;
  const ChainSequence& c_;
  const TopologyOptions& o_;
  P origin_;
  std::vector<const ResidueTemplate*> t_;
  std::vector<ResidueRole> role_;
  std::vector<Backbone> bb_;
  P prev_c_{};  // C of the residue before the current one (amino acid or ACE)
  std::size_t prev_c_index_ = 0, prev_o_index_ = 0;
  int ligands_ = 0;
};

}  // namespace

std::size_t ResidueTemplate::find(const std::string& name) const {
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (atoms[i].name == name) return i;
  return atoms.size();
}

ResidueRole residue_role(const ResidueTemplate& t) {
  if (t.id == "ACE") return ResidueRole::NCap;
  if (t.id == "NME" || t.id == "NH2") return ResidueRole::CCap;
  std::string type = t.type;
  for (auto& ch : type) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  // "L-PEPTIDE LINKING", "D-PEPTIDE LINKING", "PEPTIDE LINKING" (chirality is the template's)
  if (type.find("PEPTIDE LINKING") != std::string::npos) return ResidueRole::AminoAcid;
  return ResidueRole::Ligand;
}

std::array<double, 3> place_atom(const std::array<double, 3>& a, const std::array<double, 3>& b,
                                 const std::array<double, 3>& c, double bond, double angle, double torsion) {
  const double th = angle * std::numbers::pi / 180.0, ph = torsion * std::numbers::pi / 180.0;
  const P bc = unit(sub(c, b));
  const P nrm = unit(cross(sub(b, a), bc));
  const P m = cross(nrm, bc);
  const P d2{-bond * std::cos(th), bond * std::sin(th) * std::cos(ph), bond * std::sin(th) * std::sin(ph)};
  return add(c, add(scale(bc, d2[0]), add(scale(m, d2[1]), scale(nrm, d2[2]))));
}

MolecularTopology build_topology(const std::vector<ChainSequence>& chains,
                                 const std::map<std::string, ResidueTemplate>& templates, const TopologyOptions& o) {
  MolecularTopology out;
  for (std::size_t ci = 0; ci < chains.size(); ++ci) {
    const ChainSequence& c = chains[ci];
    if (c.residues.empty()) throw std::invalid_argument("chain '" + c.chain + "' has no residues");
    std::set<int> numbers;
    for (const auto& r : c.residues)
      if (!numbers.insert(r.number).second) fail(c, r, "residue number used twice in the chain");
    ChainBuilder(out, c, templates, o, P{0.0, kChainGap * static_cast<double>(ci), 0.0}).build();
  }
  std::sort(out.bonds.begin(), out.bonds.end());
  out.bonds.erase(std::unique(out.bonds.begin(), out.bonds.end()), out.bonds.end());
  return out;
}

}  // namespace gemflow::distgeom
