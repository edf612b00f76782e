// Protein topology from the sequence (see gemflow/distgeom/topology.hpp).
#include "gemflow/distgeom/topology.hpp"

#include <algorithm>
#include <cmath>
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
constexpr double kPeptideCN = 1.329;   // C–N
constexpr double kAngleCACN = 116.2;   // CA–C–N
constexpr double kAngleCNCA = 121.7;   // C–N–CA
constexpr double kAngleCACO = 120.8;   // CA–C–O (= 360 − CA–C–N − O–C–N 123.0)
constexpr double kBondCO = 1.231;      // C=O
constexpr double kBondCOO = 1.249;     // carboxylate C–O (Engh & Huber 1991, CCOO)
constexpr double kChainGap = 40.0;     // Å between chains (y)
constexpr double kProlinePhi = -63.0;  // degrees

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

}  // namespace

std::size_t ResidueTemplate::find(const std::string& name) const {
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (atoms[i].name == name) return i;
  return atoms.size();
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
  auto add_atom = [&](const ChainSequence& c, const SequenceResidue& r, const std::string& name,
                      const std::string& element, const P& x) {
    out.atoms.push_back({element, name, r.name, c.chain, r.number});
    out.xyz.insert(out.xyz.end(), {x[0], x[1], x[2]});
    return out.atoms.size() - 1;
  };
  for (std::size_t ci = 0; ci < chains.size(); ++ci) {
    const ChainSequence& c = chains[ci];
    if (c.residues.empty()) throw std::invalid_argument("chain '" + c.chain + "' has no residues");
    std::set<int> numbers;
    for (const auto& r : c.residues)
      if (!numbers.insert(r.number).second) fail(c, r, "residue number used twice in the chain");
    const P origin{0.0, kChainGap * static_cast<double>(ci), 0.0};
    P prev_n{}, prev_ca{}, prev_c{};
    std::size_t prev_c_index = 0, prev_o_index = 0;
    for (std::size_t ri = 0; ri < c.residues.size(); ++ri) {
      const SequenceResidue& r = c.residues[ri];
      const auto it = templates.find(r.name);
      if (it == templates.end())
        fail(c, r, "no residue template (the CCD entries shipped are the 20 standard amino acids)");
      const ResidueTemplate& t = it->second;
      const std::size_t tn = t.find("N"), tca = t.find("CA"), tc = t.find("C");
      if (tn == t.atoms.size() || tca == t.atoms.size() || tc == t.atoms.size() || t.bonds.empty())
        fail(c, r, "template " + t.id + " lacks N, CA, C or bonds");
      const P TN = t.atoms[tn].xyz, TCA = t.atoms[tca].xyz, TC = t.atoms[tc].xyz;
      const double b_nca = norm(sub(TCA, TN)), b_cac = norm(sub(TC, TCA)), a_ncac = angle_deg(TN, TCA, TC);
      // backbone of this residue
      P N, CA, C;
      if (ri == 0) {
        N = origin;
        CA = add(origin, P{b_nca, 0, 0});
        const double th = (180.0 - a_ncac) * std::numbers::pi / 180.0;
        C = add(CA, P{b_cac * std::cos(th), b_cac * std::sin(th), 0});
      } else {
        N = place_atom(prev_n, prev_ca, prev_c, kPeptideCN, kAngleCACN, o.psi);
        CA = place_atom(prev_ca, prev_c, N, b_nca, kAngleCNCA, o.omega);
        // a proline's ring fixes φ near −63° (its CD must lie in the C(i−1)–N–CA plane)
        C = place_atom(prev_c, N, CA, b_cac, a_ncac, t.id == "PRO" ? kProlinePhi : o.phi);
      }
      // rigid placement of the template on N, CA, C
      const std::vector<double> mob{TN[0], TN[1], TN[2], TCA[0], TCA[1], TCA[2], TC[0], TC[1], TC[2]};
      const std::vector<double> tgt{N[0], N[1], N[2], CA[0], CA[1], CA[2], C[0], C[1], C[2]};
      const Superposition sp = kabsch(mob, tgt);
      const bool first = ri == 0, last = ri + 1 == c.residues.size();
      const bool pro = t.id == "PRO";
      const auto removed = removed_atoms(c, r, t, o.histidine);
      std::vector<std::size_t> index(t.atoms.size(), SIZE_MAX);
      std::size_t n_index = 0;
      const double b_nh = [&] {
        for (auto [i, j] : t.bonds) {
          const std::size_t h = i == tn ? j : j == tn ? i : SIZE_MAX;
          if (h != SIZE_MAX && t.atoms[h].element == "H") return norm(sub(t.atoms[h].xyz, TN));
        }
        return 1.01;
      }();
      for (std::size_t k = 0; k < t.atoms.size(); ++k) {
        const TemplateAtom& a = t.atoms[k];
        if (removed.count(a.name)) continue;
        const bool n_hydrogen = a.element == "H" && std::any_of(t.bonds.begin(), t.bonds.end(), [&](const auto& bd) {
                                  return (bd[0] == k && bd[1] == tn) || (bd[1] == k && bd[0] == tn);
                                });
        if (n_hydrogen) continue;  // amide / terminal hydrogens are placed below
        if (a.leaving && !(last && a.name == "OXT")) continue;
        std::vector<double> x{a.xyz[0], a.xyz[1], a.xyz[2]};
        distgeom::apply(sp, x);
        index[k] = add_atom(c, r, a.name, a.element, {x[0], x[1], x[2]});
        if (k == tn) n_index = index[k];
      }
      // bonds of the template among kept atoms
      for (auto [i, j] : t.bonds)
        if (index[i] != SIZE_MAX && index[j] != SIZE_MAX)
          out.bonds.push_back({std::min(index[i], index[j]), std::max(index[i], index[j])});
      // N hydrogens
      if (first) {
        if (pro) {
          // NH2+: two hydrogens tetrahedral to CA and CD (names H2, H3 as in the PDB)
          const std::size_t tcd = t.find("CD");
          if (tcd == t.atoms.size() || index[tcd] == SIZE_MAX) fail(c, r, "proline template without CD");
          const P CD{out.xyz[3 * index[tcd]], out.xyz[3 * index[tcd] + 1], out.xyz[3 * index[tcd] + 2]};
          const P u = unit(sub(CA, N)), v = unit(sub(CD, N));
          const P m = scale(unit(add(u, v)), -1.0), p = unit(cross(u, v));
          const double half = 109.5 / 2.0 * std::numbers::pi / 180.0;
          const char* names[2] = {"H2", "H3"};
          for (int s = 0; s < 2; ++s) {
            const P h = add(N, scale(add(scale(m, std::cos(half)), scale(p, (s ? -1 : 1) * std::sin(half))), b_nh));
            const auto hi = add_atom(c, r, names[s], "H", h);
            out.bonds.push_back({std::min(n_index, hi), std::max(n_index, hi)});
          }
        } else {
          // NH3+: staggered on C–CA–N (torsions 60, 180, -60)
          const double tors[3] = {60.0, 180.0, -60.0};
          const char* names[3] = {"H1", "H2", "H3"};
          for (int s = 0; s < 3; ++s) {
            const auto hi = add_atom(c, r, names[s], "H", place_atom(C, CA, N, b_nh, 109.5, tors[s]));
            out.bonds.push_back({std::min(n_index, hi), std::max(n_index, hi)});
          }
        }
      } else {
        // peptide bond and carbonyl O of the previous residue (in the C–N plane, trans to N)
        out.bonds.push_back({std::min(prev_c_index, n_index), std::max(prev_c_index, n_index)});
        const P O = place_atom(N, prev_ca, prev_c, kBondCO, kAngleCACO, 180.0);
        out.xyz[3 * prev_o_index] = O[0];
        out.xyz[3 * prev_o_index + 1] = O[1];
        out.xyz[3 * prev_o_index + 2] = O[2];
        if (!pro && !removed.count("H")) {
          // amide H on the external bisector of C–N–CA
          const P h = add(N, scale(unit(add(unit(sub(N, prev_c)), unit(sub(N, CA)))), b_nh));
          const auto hi = add_atom(c, r, "H", "H", h);
          out.bonds.push_back({std::min(n_index, hi), std::max(n_index, hi)});
        }
      }
      // Carboxylates (Asp, Glu, C-terminus): the CCD entries are the acids (C=O 1.21, C–OH
      // 1.31 Å); both C–O become the carboxylate's, along the template directions.
      const std::pair<const char*, std::array<const char*, 2>> coo[] = {
          {"CG", {"OD1", "OD2"}}, {"CD", {"OE1", "OE2"}}, {"C", {"O", "OXT"}}};
      for (const auto& [cn, os] : coo) {
        const std::size_t k = t.find(cn), k1 = t.find(os[0]), k2 = t.find(os[1]);
        if (k == t.atoms.size() || k1 == t.atoms.size() || k2 == t.atoms.size()) continue;
        if (index[k] == SIZE_MAX || index[k1] == SIZE_MAX || index[k2] == SIZE_MAX) continue;
        if ((t.id != "ASP" && cn == std::string("CG")) || (t.id != "GLU" && cn == std::string("CD"))) continue;
        const P cx{out.xyz[3 * index[k]], out.xyz[3 * index[k] + 1], out.xyz[3 * index[k] + 2]};
        for (std::size_t o_at : {index[k1], index[k2]}) {
          const P ox{out.xyz[3 * o_at], out.xyz[3 * o_at + 1], out.xyz[3 * o_at + 2]};
          const P nx = add(cx, scale(unit(sub(ox, cx)), kBondCOO));
          for (int e = 0; e < 3; ++e) out.xyz[3 * o_at + e] = nx[e];
        }
      }
      prev_n = N;
      prev_ca = CA;
      prev_c = C;
      prev_c_index = index[tc];
      const std::size_t to = t.find("O");
      if (to == t.atoms.size() || index[to] == SIZE_MAX) fail(c, r, "template " + t.id + " lacks O");
      prev_o_index = index[to];
    }
  }
  std::sort(out.bonds.begin(), out.bonds.end());
  out.bonds.erase(std::unique(out.bonds.begin(), out.bonds.end()), out.bonds.end());
  return out;
}

}  // namespace gemflow::distgeom
