// MDL SD files and molfiles, V2000 and V3000 (see gemflow/io/molecules.hpp).
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/limits.hpp"
#include "gemflow/io/molecules.hpp"
#include "gemflow/io/star.hpp"  // read_text_file
#include "text.hpp"

namespace gemflow::io {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Columns [first, last] (1-based, inclusive) of a line, or "" past its end.
std::string_view cols(std::string_view line, std::size_t first, std::size_t last) {
  if (line.size() < first) return {};
  return line.substr(first - 1, last - first + 1);
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

/// The lines of a text (without '\n' and a trailing '\r'), numbered from 1.
class Lines {
 public:
  Lines(std::string_view text, std::string path) : path_(std::move(path)) {
    std::size_t pos = 0;
    while (pos < text.size()) {
      auto nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      auto l = text.substr(pos, nl - pos);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      lines_.push_back(l);
      pos = nl + 1;
    }
  }
  [[nodiscard]] bool done() const { return next_ >= lines_.size(); }
  /// Line number (1-based) of the line next() returns.
  [[nodiscard]] int number() const { return static_cast<int>(next_) + 1; }
  /// The next line; ParseError "... ends before <what>" at end of file.
  std::string_view next(const char* what) {
    if (done()) fail(static_cast<int>(lines_.size()), "file ends before " + std::string(what));
    return lines_[next_++];
  }
  /// True when every line from the next one on is blank (without moving).
  [[nodiscard]] bool rest_blank() const {
    for (std::size_t k = next_; k < lines_.size(); ++k)
      if (!trim(lines_[k]).empty()) return false;
    return true;
  }
  [[noreturn]] void fail(int line, const std::string& msg) const { throw ParseError(path_, line, msg); }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string_view> lines_;
  std::size_t next_ = 0;
};

long to_long(const Lines& in, int line, std::string_view text, const std::string& what) {
  const auto t = trim(text);
  long v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
    in.fail(line, what + ": expected an integer, got '" + std::string(t) + "'");
  return v;
}

double to_double(const Lines& in, int line, std::string_view text, const std::string& what) {
  const auto t = trim(text);
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
    in.fail(line, what + ": expected a number, got '" + std::string(t) + "'");
  if (!std::isfinite(v))  // QA: nan and inf passed, to fail later as bounds without a file:line
    in.fail(line, what + ": '" + std::string(t) + "' is not a finite number");
  return v;
}

/// A coordinate: a finite number within ±kMaxAbsCoordinate (1e300 overflowed bond perception).
double to_coordinate(const Lines& in, int line, std::string_view text, const std::string& what) {
  const double v = to_double(in, line, text, what);
  if (std::fabs(v) > kMaxAbsCoordinate)
    in.fail(line, what + ": " + std::string(trim(text)) + " Å is beyond the ±1e6 Å that a coordinate may have");
  return v;
}

/// A formal charge: CTfile charges are -15..15 (a larger one was cut to int silently).
int to_charge(const Lines& in, int line, std::string_view text, const std::string& what) {
  const long q = to_long(in, line, text, what);
  if (q < -15 || q > 15) in.fail(line, what + ": " + std::to_string(q) + " is not a charge of -15..15");
  return static_cast<int>(q);
}

bool is_record_end(std::string_view l) { return l.starts_with("$$$$"); }

void check_element(const Lines& in, int line, const std::string& el, std::size_t atom) {
  if (el.empty()) in.fail(line, "atom " + std::to_string(atom) + ": empty element symbol");
}

/// `max_order`: the largest bond type of the CTfile version (V2000: 8 = any; V3000: 10 = hydrogen).
MoleculeBond make_bond(const Lines& in, int line, long a, long b, long order, std::size_t n, std::size_t bond,
                       long max_order) {
  const std::string which = "bond " + std::to_string(bond);
  if (order < 1 || order > max_order)  // QA: type 9 in a V2000 file was accepted
    in.fail(line, which + ": bond type " + std::to_string(order) + " is not one of 1-" + std::to_string(max_order) +
                      " (1 single, 2 double, 3 triple, 4 aromatic, 5-8 query types" +
                      (max_order > 8 ? ", 9 coordination, 10 hydrogen)" : ")"));
  if (a < 1 || static_cast<std::size_t>(a) > n || b < 1 || static_cast<std::size_t>(b) > n)
    in.fail(line, which + " joins atoms " + std::to_string(a) + " and " + std::to_string(b) + " but the record has " +
                      std::to_string(n) + " atoms");
  if (a == b) in.fail(line, which + " joins atom " + std::to_string(a) + " to itself");
  if (a > b) std::swap(a, b);
  return {static_cast<std::size_t>(a - 1), static_cast<std::size_t>(b - 1), static_cast<int>(order)};
}

/// V2000 connection table after the counts line; reads through "M  END".
void read_v2000(Lines& in, Molecule& m, long na, long nb) {
  for (long i = 0; i < na; ++i) {
    const int ln = in.number();
    if (in.done() && i > 0)  // cut off inside the block (QA: "file ends before the atom block")
      in.fail(ln - 1, "file ends after " + std::to_string(i) + " of " + std::to_string(na) + " atoms");
    const auto l = in.next("the atom block");
    if (is_record_end(l) || l.starts_with("M  END"))
      in.fail(ln, "record ends after " + std::to_string(i) + " of " + std::to_string(na) + " atoms");
    const std::string at = "atom " + std::to_string(i + 1);
    MoleculeAtom a;
    a.xyz = {to_coordinate(in, ln, cols(l, 1, 10), at + " x (columns 1-10)"),
             to_coordinate(in, ln, cols(l, 11, 20), at + " y (columns 11-20)"),
             to_coordinate(in, ln, cols(l, 21, 30), at + " z (columns 21-30)")};
    a.element = upper(trim(cols(l, 32, 34)));
    check_element(in, ln, a.element, static_cast<std::size_t>(i + 1));
    const auto ch = trim(cols(l, 37, 39));
    if (!ch.empty()) {
      const long code = to_long(in, ln, ch, at + " charge code (columns 37-39)");
      if (code < 0 || code > 7) in.fail(ln, at + ": charge code " + std::to_string(code) + " is not 0-7");
      a.charge = code == 0 || code == 4 ? 0 : static_cast<int>(4 - code);
    }
    m.atoms.push_back(std::move(a));
  }
  for (long i = 0; i < nb; ++i) {
    const int ln = in.number();
    if (in.done() && i > 0)
      in.fail(ln - 1, "file ends after " + std::to_string(i) + " of " + std::to_string(nb) + " bonds");
    const auto l = in.next("the bond block");
    if (is_record_end(l) || l.starts_with("M  "))
      in.fail(ln, "record ends after " + std::to_string(i) + " of " + std::to_string(nb) + " bonds");
    const std::string bt = "bond " + std::to_string(i + 1);
    const long a = to_long(in, ln, cols(l, 1, 3), bt + " first atom (columns 1-3)");
    const long b = to_long(in, ln, cols(l, 4, 6), bt + " second atom (columns 4-6)");
    const long t = to_long(in, ln, cols(l, 7, 9), bt + " type (columns 7-9)");
    m.bonds.push_back(make_bond(in, ln, a, b, t, m.atoms.size(), static_cast<std::size_t>(i + 1), 8));
  }
  bool chg_seen = false;
  while (true) {
    const int ln = in.number();
    const auto l = in.next("M  END");
    if (l.starts_with("M  END")) return;
    if (is_record_end(l)) in.fail(ln, "record ends without 'M  END'");
    if (l.starts_with("M  CHG")) {
      if (!chg_seen)
        for (auto& a : m.atoms) a.charge = 0;  // M  CHG supersedes the atom block
      chg_seen = true;
      const long k = to_long(in, ln, cols(l, 7, 9), "M  CHG entry count (columns 7-9)");
      for (long e = 0; e < k; ++e) {
        const std::size_t c = 10 + 8 * static_cast<std::size_t>(e);
        const long atom = to_long(in, ln, cols(l, c + 1, c + 3), "M  CHG atom " + std::to_string(e + 1));
        const int q = to_charge(in, ln, cols(l, c + 5, c + 7), "M  CHG charge " + std::to_string(e + 1));
        if (atom < 1 || static_cast<std::size_t>(atom) > m.atoms.size())
          in.fail(ln, "M  CHG names atom " + std::to_string(atom) + " but the record has " +
                          std::to_string(m.atoms.size()) + " atoms");
        m.atoms[static_cast<std::size_t>(atom - 1)].charge = q;
      }
    }
  }
}

/// The next V3000 logical line ("M  V30 " removed, '-' continuations joined).
std::string v30_line(Lines& in, int& ln, const char* what) {
  ln = in.number();
  std::string out;
  while (true) {
    const int this_ln = in.number();
    const auto l = in.next(what);
    if (!l.starts_with("M  V30 ")) {
      if (is_record_end(l) || l.starts_with("M  END")) in.fail(this_ln, std::string("record ends before ") + what);
      in.fail(this_ln, std::string("expected an 'M  V30 ' line in ") + what + ", got '" + std::string(trim(l)) + "'");
    }
    auto body = l.substr(7);
    const auto t = trim(body);
    if (!t.empty() && t.back() == '-') {
      out += std::string(t.substr(0, t.size() - 1));
      continue;
    }
    out += std::string(body);
    return out;
  }
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> w;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    std::size_t j = i;
    if (s[i] == '"') {  // quoted type, e.g. "[N,O]" lists
      j = s.find('"', i + 1);
      j = j == std::string_view::npos ? s.size() : j + 1;
    } else {
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    }
    w.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return w;
}

/// V3000 connection table after the counts line; reads through "M  END".
void read_v3000(Lines& in, Molecule& m) {
  int ln = 0;
  auto expect = [&](const std::string& want) {
    const auto l = v30_line(in, ln, want.c_str());
    if (trim(l) != want) in.fail(ln, "expected 'M  V30 " + want + "', got 'M  V30 " + std::string(trim(l)) + "'");
  };
  expect("BEGIN CTAB");
  const auto counts = words(v30_line(in, ln, "COUNTS"));
  if (counts.size() < 2 || counts[0] != "COUNTS") in.fail(ln, "expected 'M  V30 COUNTS na nb ...'");
  const long na = to_long(in, ln, counts[1], "COUNTS atom count");
  const long nb = counts.size() > 2 ? to_long(in, ln, counts[2], "COUNTS bond count") : 0;
  if (na < 0 || nb < 0) in.fail(ln, "negative COUNTS");
  std::map<long, std::size_t> index;  // V3000 atom id → 0-based index
  bool atoms_read = na == 0, bonds_read = nb == 0;
  while (true) {
    // the view must not outlive the logical line it trims (a view into the temporary was read
    // after free)
    const std::string logical = v30_line(in, ln, "END CTAB");
    const std::string_view l = trim(logical);
    if (l == "END CTAB") break;
    if (l == "BEGIN ATOM") {
      while (true) {
        const auto w = words(v30_line(in, ln, "END ATOM"));
        if (w.size() == 2 && w[0] == "END" && w[1] == "ATOM") break;
        const std::string at = "atom " + std::to_string(m.atoms.size() + 1);
        if (w.size() < 6)
          in.fail(ln, at + ": expected 'index type x y z aamap', got " + std::to_string(w.size()) + " fields");
        const long id = to_long(in, ln, w[0], at + " index");
        if (!index.emplace(id, m.atoms.size()).second) in.fail(ln, "atom index " + std::to_string(id) + " used twice");
        MoleculeAtom a;
        a.element = upper(w[1]);
        check_element(in, ln, a.element, m.atoms.size() + 1);
        a.xyz = {to_coordinate(in, ln, w[2], at + " x"), to_coordinate(in, ln, w[3], at + " y"),
                 to_coordinate(in, ln, w[4], at + " z")};
        for (std::size_t k = 6; k < w.size(); ++k)
          if (w[k].starts_with("CHG=")) a.charge = to_charge(in, ln, std::string_view(w[k]).substr(4), at + " CHG");
        m.atoms.push_back(std::move(a));
      }
      if (static_cast<long>(m.atoms.size()) != na)
        in.fail(ln, "ATOM block has " + std::to_string(m.atoms.size()) + " atoms, COUNTS says " + std::to_string(na));
      atoms_read = true;
    } else if (l == "BEGIN BOND") {
      while (true) {
        const auto w = words(v30_line(in, ln, "END BOND"));
        if (w.size() == 2 && w[0] == "END" && w[1] == "BOND") break;
        const std::size_t k = m.bonds.size() + 1;
        const std::string bt = "bond " + std::to_string(k);
        if (w.size() < 4)
          in.fail(ln, bt + ": expected 'index type atom1 atom2', got " + std::to_string(w.size()) + " fields");
        const long t = to_long(in, ln, w[1], bt + " type");
        long ab[2];
        for (int e = 0; e < 2; ++e) {
          const long id = to_long(in, ln, w[2 + static_cast<std::size_t>(e)], bt + " atom");
          auto it = index.find(id);
          if (it == index.end())
            in.fail(ln, bt + " names atom " + std::to_string(id) + ", which the ATOM block does not list");
          ab[e] = static_cast<long>(it->second) + 1;
        }
        m.bonds.push_back(make_bond(in, ln, ab[0], ab[1], t, m.atoms.size(), k, 10));
      }
      if (static_cast<long>(m.bonds.size()) != nb)
        in.fail(ln, "BOND block has " + std::to_string(m.bonds.size()) + " bonds, COUNTS says " + std::to_string(nb));
      bonds_read = true;
    } else if (l.starts_with("BEGIN ")) {
      const std::string end = "END " + std::string(l.substr(6));
      while (trim(v30_line(in, ln, end.c_str())) != end) {
      }
    }
  }
  if (!atoms_read) in.fail(ln, "V3000 record without an ATOM block (COUNTS says " + std::to_string(na) + " atoms)");
  if (!bonds_read) in.fail(ln, "V3000 record without a BOND block (COUNTS says " + std::to_string(nb) + " bonds)");
  while (true) {
    const int l_no = in.number();
    const auto l = in.next("M  END");
    if (l.starts_with("M  END")) return;
    if (is_record_end(l)) in.fail(l_no, "record ends without 'M  END'");
  }
}

}  // namespace

MoleculeSet parse_sdf(std::string_view text, const std::string& path, const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  Lines in(text, path);
  MoleculeSet set;
  std::size_t tick = 0;
  while (!in.done()) {
    detail::poll_cancel(cancel, tick);
    // Skip blank lines between records (and at the end of the file).
    const int first = in.number();
    Molecule m;
    m.source = path + ":" + std::to_string(first);
    const auto name = in.next("the header");
    // A blank line that is only followed by blank lines ends the file; else it is a name. (A
    // copy of the line table per blank name made 60 000 such records take quadratic time.)
    if (trim(name).empty() && in.rest_blank()) break;
    m.name = std::string(trim(name));
    (void)in.next("the header's program line");
    (void)in.next("the header's comment line");
    const int cl = in.number();
    const auto counts = in.next("the counts line");
    if (is_record_end(counts)) in.fail(cl, "record ends before its counts line");
    const auto version = trim(cols(counts, 35, 39));
    if (version == "V3000") {
      read_v3000(in, m);
    } else if (version.empty() || version == "V2000") {
      const long na = to_long(in, cl, cols(counts, 1, 3), "counts line: atom count (columns 1-3)");
      const long nb = to_long(in, cl, cols(counts, 4, 6), "counts line: bond count (columns 4-6)");
      if (na < 0 || nb < 0) in.fail(cl, "counts line: negative count");
      read_v2000(in, m, na, nb);
    } else {
      in.fail(cl, "counts line: unknown version '" + std::string(version) + "' (columns 35-39; V2000 or V3000)");
    }
    // Data items up to "$$$$" (or the end of a .mol file).
    while (!in.done()) {
      if (is_record_end(in.next(""))) break;
    }
    set.molecules.push_back(std::move(m));
  }
  if (set.molecules.empty()) throw ParseError(path, 0, "no molecule record in the file (it is empty or blank)");
  return set;
}

MoleculeSet read_sdf(const std::string& path, const CancelCheck& cancel) {
  return parse_sdf(read_text_file(path), path, cancel);
}

}  // namespace gemflow::io
