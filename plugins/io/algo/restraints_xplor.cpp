// Xplor-NIH / CNS distance and dihedral restraint (.tbl) reader.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "restraints_common.hpp"
#include "text.hpp"

namespace gemflow::io {

namespace {

// What a distance-restraint file can ask for is bounded by what a molecule can hold, not by the
// integers it spells: these limits keep a hostile or mistyped file from expanding into billions
// of alternatives (a resid range of 2^32, a product of two 10^4 ranges, 24 'and'-ed 'or's) or
// from overflowing the stack through nested parentheses.
constexpr std::int64_t kMaxResidRange = 10000;          // residues in one 'resid a:b'
constexpr std::int64_t kMaxAlternatives = 10000;        // atom-pair alternatives of one restraint
constexpr auto kMaxTotalAlternatives = static_cast<std::int64_t>(detail::kMaxTotalAlternatives);
constexpr int kMaxNesting = 100;                        // parentheses inside one selection
constexpr std::int64_t kMaxTermProducts = 2000000;      // 'and' term products of the whole file
constexpr double kMaxDistance = 1.0e4;                  // Å: d, d + dplus; larger is never a restraint

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string trimmed(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

struct Tok {
  enum Kind { End, Open, Close, Word, Quoted } kind = End;
  std::string text;
  int line = 0;
};

std::vector<Tok> tokenize(std::string_view s, const std::string& path) {
  std::vector<Tok> out;
  int line = 1;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '!') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '{') {
      int depth = 0, start = line;
      do {
        if (i >= s.size()) throw ParseError(path, start, "comment '{' is not closed by '}'");
        if (s[i] == '{') ++depth;
        else if (s[i] == '}') --depth;
        else if (s[i] == '\n') ++line;
        ++i;
      } while (depth > 0);
    } else if (c == '}') {
      throw ParseError(path, line, "'}' without an opening '{'");
    } else if (c == '(') {
      out.push_back({Tok::Open, "(", line});
      ++i;
    } else if (c == ')') {
      out.push_back({Tok::Close, ")", line});
      ++i;
    } else if (c == '"' || c == '\'') {
      std::size_t e = s.find(c, i + 1);
      std::size_t nl = s.find('\n', i + 1);
      if (e == std::string_view::npos || (nl != std::string_view::npos && nl < e))
        throw ParseError(path, line, std::string("unterminated quoted string (missing ") + c + ")");
      out.push_back({Tok::Quoted, std::string(s.substr(i + 1, e - i - 1)), line});
      i = e + 1;
    } else {
      std::size_t b = i;
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '(' && s[i] != ')' &&
             s[i] != '!' && s[i] != '{' && s[i] != '"')
        ++i;
      out.push_back({Tok::Word, std::string(s.substr(b, i - b)), line});
    }
  }
  // Errors at the end of the file name the line of the last token.
  out.push_back({Tok::End, "", out.empty() ? line : out.back().line});
  return out;
}

/// One conjunction of attribute tests (a term of the selection's disjunctive normal form).
struct Term {
  std::optional<std::string> segid, name, resname;
  std::optional<std::pair<int, int>> resid;
  int line = 0;

  /// Identifies the atoms the term selects (not where it was written).
  std::string key() const {
    auto f = [](const std::optional<std::string>& v) { return v ? "=" + *v : std::string("*"); };
    return f(segid) + '\x1f' + f(name) + '\x1f' + f(resname) + '\x1f' +
           (resid ? std::to_string(resid->first) + ":" + std::to_string(resid->second) : "*");
  }
};

/// Appends the terms of `more` that `terms` does not hold yet (`seen` holds the keys of
/// `terms`): `(name CA or name CA)` is one term, so repeated alternatives cannot double the
/// normal form at every 'and'.
void append_distinct(std::vector<Term>& terms, std::set<std::string>& seen, const std::vector<Term>& more) {
  for (const auto& t : more)
    if (seen.insert(t.key()).second) terms.push_back(t);
}

std::set<std::string> keys_of(const std::vector<Term>& terms) {
  std::set<std::string> k;
  for (const auto& t : terms) k.insert(t.key());
  return k;
}

bool is_kw(const Tok& t, std::initializer_list<const char*> names) {
  if (t.kind != Tok::Word) return false;
  std::string l = lower(t.text);
  for (const char* n : names)
    if (l == n) return true;
  return false;
}

const char* kControl[] = {"noe",         "end",        "set",        "class",      "ceiling",  "averaging", "potential",
                          "scale",       "sqconstant", "sqexponent", "soexponent", "sqoffset", "rswitch",   "asymptote",
                          "msoexponent", "mrswitch",   "reset",      "nres",       "bhig",     "cv",        "partition",
                          "temperature", "monomers",   "ncount",     "distribute", "den",      "print",     "evaluate",
                          "restraints",  "restraint",  "dihedral",   "dihed",      "dihe",     "nassign",   "nass"};

bool is_control(const Tok& t) {
  if (t.kind != Tok::Word) return false;
  std::string l = lower(t.text);
  auto eq = l.find('=');
  if (eq != std::string::npos) l = l.substr(0, eq);
  for (const char* c : kControl)
    if (l == c) return true;
  return false;
}

class Parser {
 public:
  Parser(std::vector<Tok> toks, const std::string& path, const CancelCheck& cancel)
      : t_(std::move(toks)), path_(path), cancel_(cancel) {}

  RestraintSet run() {
    RestraintSet set;
    set.source = path_;
    set.format = "xplor";
    std::size_t skipped_control = 0;
    while (peek().kind != Tok::End) {
      detail::poll_cancel(cancel_, tick_);
      const Tok& t = peek();
      if (is_kw(t, {"assign", "assi"})) {
        const std::size_t n = selections_ahead();
        if (n == 4) {
          set.dihedrals.push_back(dihedral(static_cast<int>(set.dihedrals.size()) + 1));
        } else if (n <= 3) {
          set.restraints.push_back(restraint(static_cast<int>(set.restraints.size()) + 1));
        } else if (skip_other_) {
          const int line = t.line;
          ++p_;
          while (peek().kind != Tok::End && !is_kw(peek(), {"assign", "assi"}) && !is_control(peek()) &&
                 !is_kw(peek(), {"remarks", "rema"}))
            ++p_;
          auto& [count, first] = skipped_[n];
          if (count++ == 0) first = line;
        } else {
          throw ParseError(path_, t.line,
                           "'assign' with " + std::to_string(n) +
                               " selections is no distance (2) or dihedral (4) "
                               "restraint" +
                               other_kind(n));
        }
      } else if (is_kw(t, {"remarks", "rema"})) {
        const int line = t.line;  // a remark runs to the end of its line
        while (peek().kind != Tok::End && peek().line == line) ++p_;
      } else if (is_control(t)) {
        ++skipped_control;
        ++p_;
        // Skip the statement's arguments up to the next assign (or the next control word).
        while (peek().kind != Tok::End && !is_kw(peek(), {"assign", "assi"}) && !is_control(peek()) &&
               !is_kw(peek(), {"remarks", "rema"}))
          ++p_;
      } else {
        throw ParseError(path_, t.line, "unexpected '" + t.text + "': expected 'assign'");
      }
    }
    for (const auto& [n, cf] : skipped_)
      set.warnings.push_back(std::to_string(cf.first) + " 'assign' statements with " + std::to_string(n) +
                             " selections (first at line " + std::to_string(cf.second) + ") are not read" +
                             other_kind(n));
    if (set.restraints.empty() && set.dihedrals.empty() && !skip_other_)
      throw ParseError(path_, 0, "no 'assign' statement (no distance or dihedral restraints)");
    return set;
  }

  /// What an 'assign' with n selections usually is, for messages.
  static std::string other_kind(std::size_t n) {
    if (n == 5) return " (Xplor-NIH carbon chemical-shift 'carb' restraints have 5)";
    if (n == 6) return " (RDC 'sani'/'dipo'/'vean' restraints have 6)";
    if (n == 8) return " (J-coupling 'coup' restraints have 8)";
    return "";
  }

  void skip_other(bool on) { skip_other_ = on; }

 private:
  const Tok& peek(std::size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Tok& next() { return t_[std::min(p_++, t_.size() - 1)]; }

  DistanceRestraint restraint(int id) {
    const Tok& a = next();  // assign
    DistanceRestraint r;
    r.id = id;
    r.origin = path_ + ":" + std::to_string(a.line);
    add_pair(r);
    while (is_kw(peek(), {"or"})) {
      ++p_;
      add_pair(r);
    }
    double v[3];
    for (int k = 0; k < 3; ++k) {
      const Tok& t = peek();
      if (t.kind == Tok::Open)
        throw ParseError(path_, t.line,
                         k == 0 ? "expected the distance 'd dminus dplus' after two selections, found a third "
                                  "selection (is this a dihedral or other restraint file?)"
                                : "expected a number, found '('");
      if (!number(t, v[k]))
        throw ParseError(path_, t.line,
                         "expected " +
                             std::string(k == 0   ? "the distance d"
                                         : k == 1 ? "dminus"
                                                  : "dplus") +
                             " (restraint 'assign' of line " + std::to_string(a.line) + "), found " +
                             (t.kind == Tok::End ? std::string("the end of the file") : "'" + t.text + "'"));
      ++p_;
    }
    r.target = v[0];
    r.lower = std::max(0.0, v[0] - v[1]);
    r.upper = v[0] + v[2];
    if (!(r.upper <= kMaxDistance) || !(v[1] <= kMaxDistance)) {
      // the numbers as short as they read back (a user's dplus 1e308 printed 309 digits)
      const auto num = [](double x) {
        char buf[32];
        return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
      };
      throw ParseError(path_, a.line,
                       "distance bound above " + std::to_string(static_cast<int>(kMaxDistance)) + " Å in restraint " +
                           std::to_string(id) + " (d " + num(v[0]) + ", dminus " + num(v[1]) + ", dplus " +
                           num(v[2]) + ")");
    }
    if (v[1] < 0 || v[2] < 0)
      throw ParseError(path_, a.line, "negative dminus or dplus in restraint " + std::to_string(id));
    if (v[0] < 0)  // QA: d = −1.8 gave an upper bound −0.1, refused later as "restraint −1"
      throw ParseError(path_, a.line,
                       "negative distance d = " + std::to_string(v[0]) + " Å in restraint " + std::to_string(id));
    for (;;) {
      if (is_kw(peek(), {"weight"})) {
        ++p_;
        const Tok& w = peek();
        if (!number(w, r.weight))
          throw ParseError(path_, w.line, "expected a number after 'weight', found '" + w.text + "'");
        ++p_;
      } else if (is_kw(peek(), {"or"})) {
        ++p_;
        add_pair(r);
      } else {
        break;
      }
    }
    if (r.weight < 0) throw ParseError(path_, a.line, "negative weight in restraint " + std::to_string(id));
    return r;
  }

  /// Selections (parenthesised groups) that follow the 'assign' at p_, up to a top-level 'or' or
  /// the first token that starts none.
  std::size_t selections_ahead() const {
    std::size_t k = p_ + 1, n = 0;
    while (k < t_.size() && t_[k].kind == Tok::Open) {
      int depth = 0;
      do {
        if (t_[k].kind == Tok::End) return n + 1;  // unbalanced: the statement's parser says where
        if (t_[k].kind == Tok::Open) ++depth;
        else if (t_[k].kind == Tok::Close) --depth;
        ++k;
      } while (depth > 0 && k < t_.size());
      ++n;
    }
    return n;
  }

  /// One atom of a dihedral: a selection of one term, one residue and one atom name.
  AtomSelector single_atom(int id, int which) {
    const int line = peek().line;
    const std::vector<Term> terms = selection();
    const std::string what = "selection " + std::to_string(which) + " of dihedral restraint " + std::to_string(id);
    if (terms.size() != 1)
      throw ParseError(path_, line, what + " selects alternatives ('or'): a dihedral needs one atom per selection");
    const Term& t = terms.front();
    if (residues(t) != 1)
      throw ParseError(path_, t.line, what + " spans several residues: a dihedral needs one atom per selection");
    if (!t.name) throw ParseError(path_, t.line, what + " has no 'name': a dihedral needs one atom per selection");
    return expand_all(t).front();
  }

  /// assign (sel) (sel) (sel) (sel) k centre range [exp]: the interval centre ± range (degrees),
  /// weight k (Xplor-NIH / CNS CDIH; exp 2 is the harmonic flat-bottom term).
  DihedralRestraint dihedral(int id) {
    const Tok& a = next();  // assign
    DihedralRestraint d;
    d.id = id;
    d.origin = path_ + ":" + std::to_string(a.line);
    for (int k = 0; k < 4; ++k) d.atoms[static_cast<std::size_t>(k)] = single_atom(id, k + 1);
    double v[4] = {0, 0, 0, 2};
    const char* names[4] = {"the force constant k", "the angle", "the range", "the exponent"};
    for (int k = 0; k < 4; ++k) {
      const Tok& t = peek();
      if (!number(t, v[k])) {
        if (k == 3) break;  // the exponent may be left out (2)
        throw ParseError(path_, t.line,
                         "expected " + std::string(names[k]) + " of dihedral restraint " + std::to_string(id) +
                             " ('assign' of line " + std::to_string(a.line) + ": k angle range exponent), found " +
                             (t.kind == Tok::End ? std::string("the end of the file") : "'" + t.text + "'"));
      }
      ++p_;
    }
    if (v[0] < 0)
      throw ParseError(path_, a.line, "negative force constant in dihedral restraint " + std::to_string(id));
    if (v[2] < 0) throw ParseError(path_, a.line, "negative range in dihedral restraint " + std::to_string(id));
    if (std::abs(v[1]) > 1e4 || v[2] > 1e4)
      throw ParseError(path_, a.line, "angle or range beyond 10000° in dihedral restraint " + std::to_string(id));
    d.weight = v[0];
    d.target = detail::wrap_degrees(v[1]);
    (void)detail::set_dihedral_interval(d, v[1] - v[2], v[1] + v[2]);
    if (v[3] != 2) ++other_exponents_;
    return d;
  }

  static bool number(const Tok& t, double& out) {
    if (t.kind != Tok::Word) return false;
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    if (b != e && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, out);
    return ec == std::errc() && p == e && std::isfinite(out);
  }

  void add_pair(DistanceRestraint& r) {
    int line = peek().line;
    std::vector<Term> a = selection(), b = selection();
    // Count before expanding: one alternative per (residue of a) × (residue of b) per term pair.
    std::int64_t count = 0;
    for (const auto& ta : a)
      for (const auto& tb : b) count += residues(ta) * residues(tb);
    const std::int64_t total = count + static_cast<std::int64_t>(r.alternatives.size());
    if (total > kMaxAlternatives)
      throw ParseError(path_, line,
                       "restraint " + std::to_string(r.id) + " expands to " + std::to_string(total) +
                           " atom-pair alternatives (at most " + std::to_string(kMaxAlternatives) +
                           "): narrow its residue ranges or 'or' lists");
    if (total_alternatives_ + count > kMaxTotalAlternatives)
      throw ParseError(path_, line,
                       "the file expands to more than " + std::to_string(kMaxTotalAlternatives) +
                           " atom-pair alternatives in all: narrow its residue ranges or 'or' lists");
    total_alternatives_ += count;
    for (const auto& ta : a)
      for (const auto& tb : b) {
        std::vector<AtomSelector> as = expand_all(ta), bs = expand_all(tb);
        for (const auto& x : as)
          for (const auto& y : bs) {
            detail::poll_cancel(cancel_, tick_);
            r.alternatives.push_back({x, y, {}, {}});
          }
      }
  }

  /// Residues a term selects (its resid range's length), checked before anything is expanded.
  std::int64_t residues(const Term& t) const {
    if (!t.resid) throw ParseError(path_, t.line, "selection without 'resid' is not supported in restraints");
    auto [lo, hi] = *t.resid;
    if (hi < lo)
      throw ParseError(path_, t.line, "resid range " + std::to_string(lo) + ":" + std::to_string(hi) + " is empty");
    const std::int64_t n = std::int64_t{hi} - std::int64_t{lo} + 1;
    if (n > kMaxResidRange)
      throw ParseError(path_, t.line,
                       "resid range " + std::to_string(lo) + ":" + std::to_string(hi) + " spans " + std::to_string(n) +
                           " residues (at most " + std::to_string(kMaxResidRange) + ")");
    return n;
  }

  std::vector<AtomSelector> expand_all(const Term& t) const {
    const std::int64_t n = residues(t);
    std::vector<AtomSelector> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
      AtomSelector s;
      s.chain = t.segid.value_or("");
      s.residue_number = static_cast<int>(std::int64_t{t.resid->first} + k);
      s.residue = t.resname.value_or("");
      s.atom = t.name.value_or("*");
      s.line = t.line;
      out.push_back(std::move(s));
    }
    return out;
  }

  // selection := '(' or_expr ')'
  std::vector<Term> selection() {
    const Tok& o = peek();
    if (o.kind != Tok::Open)
      throw ParseError(path_, o.line,
                       "expected '(' to start an atom selection, found " +
                           (o.kind == Tok::End ? std::string("the end of the file") : "'" + o.text + "'"));
    ++p_;
    auto terms = or_expr();
    const Tok& c = peek();
    if (c.kind != Tok::Close)
      throw ParseError(path_, c.line,
                       "expected ')' to close the selection opened at line " + std::to_string(o.line) + ", found " +
                           (c.kind == Tok::End ? std::string("the end of the file") : "'" + c.text + "'"));
    ++p_;
    if (terms.empty()) throw ParseError(path_, o.line, "selection can never match (contradictory 'and')");
    return terms;
  }

  std::vector<Term> or_expr() {
    auto terms = and_expr();
    auto seen = keys_of(terms);
    while (is_kw(peek(), {"or"})) {
      int line = peek().line;
      ++p_;
      auto more = and_expr();
      check_terms(terms.size() + more.size(), line);
      append_distinct(terms, seen, more);
    }
    return terms;
  }

  /// The disjunctive normal form of a selection grows as a product over 'and': bounded here,
  /// before the product is built.
  void check_terms(std::size_t n, int line) const {
    if (n > static_cast<std::size_t>(kMaxAlternatives))
      throw ParseError(path_, line,
                       "selection expands to " + std::to_string(n) + " alternatives (at most " +
                           std::to_string(kMaxAlternatives) + "): simplify its 'and'/'or' combination");
  }

  std::vector<Term> and_expr() {
    auto terms = factor();
    while (is_kw(peek(), {"and"})) {
      int line = peek().line;
      ++p_;
      auto rhs = factor();
      check_terms(terms.size() * rhs.size(), line);
      // each 'and' is bounded above, but a chain of them over 10⁴ terms is not: the file's work
      term_products_ += static_cast<std::int64_t>(terms.size() * rhs.size());
      if (term_products_ > kMaxTermProducts)
        throw ParseError(path_, line,
                         "the file's selections need more than " + std::to_string(kMaxTermProducts) +
                             " products of 'and'-ed terms (long 'and' chains over many alternatives): simplify them");
      std::vector<Term> product;
      std::set<std::string> seen;
      for (const auto& x : terms)
        for (const auto& y : rhs)
          if (auto m = merge(x, y)) append_distinct(product, seen, {*m});
      terms = std::move(product);
    }
    return terms;
  }

  static std::optional<Term> merge(const Term& x, const Term& y) {
    Term r = x;
    auto field = [](auto& dst, const auto& src) {
      if (!src) return true;
      if (dst && *dst != *src) return false;
      dst = src;
      return true;
    };
    if (!field(r.segid, y.segid) || !field(r.name, y.name) || !field(r.resname, y.resname)) return std::nullopt;
    if (y.resid) {
      if (r.resid) {
        int lo = std::max(r.resid->first, y.resid->first), hi = std::min(r.resid->second, y.resid->second);
        if (hi < lo) return std::nullopt;
        r.resid = std::make_pair(lo, hi);
      } else {
        r.resid = y.resid;
      }
    }
    r.line = std::max(x.line, y.line);
    return r;
  }

  std::string value(const char* keyword) {
    const Tok& t = peek();
    if (t.kind != Tok::Word && t.kind != Tok::Quoted)
      throw ParseError(path_, t.line,
                       std::string("expected a value after '") + keyword + "', found " +
                           (t.kind == Tok::End ? std::string("the end of the file") : "'" + t.text + "'"));
    ++p_;
    return t.text;
  }

  int integer(const std::string& text, int line, const char* what) const {
    int v = 0;
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e)
      throw ParseError(path_, line, std::string("bad ") + what + " '" + text + "' (expected an integer)");
    return v;
  }

  std::pair<int, int> resid_value() {
    const Tok& t = peek();
    int line = t.line;
    std::string v = value("resid");
    std::string lo = v, hi;
    auto colon = v.find(':');
    if (colon != std::string::npos) {
      lo = v.substr(0, colon);
      hi = v.substr(colon + 1);
      if (hi.empty()) hi = value("resid");
    } else if (peek().kind == Tok::Word && peek().text.rfind(':', 0) == 0) {
      std::string c = next().text.substr(1);
      hi = c.empty() ? value("resid") : c;
    }
    int a = integer(lo, line, "resid");
    return {a, hi.empty() ? a : integer(hi, line, "resid")};
  }

  std::vector<Term> factor() {
    const Tok& t = peek();
    Term term;
    term.line = t.line;
    if (t.kind == Tok::Open) {
      if (depth_ >= kMaxNesting)
        throw ParseError(
            path_, t.line,
            "parentheses nested deeper than " + std::to_string(kMaxNesting) + " levels in an atom selection");
      ++p_;
      ++depth_;
      auto terms = or_expr();
      --depth_;
      const Tok& c = peek();
      if (c.kind != Tok::Close)
        throw ParseError(path_, c.line,
                         "expected ')' to close the '(' of line " + std::to_string(t.line) + ", found " +
                             (c.kind == Tok::End ? std::string("the end of the file") : "'" + c.text + "'"));
      ++p_;
      return terms;
    }
    if (t.kind != Tok::Word)
      throw ParseError(path_, t.line,
                       "expected a selection keyword (resid, segid, name, resname), found " +
                           (t.kind == Tok::End ? std::string("the end of the file") : "'" + t.text + "'"));
    std::string kw = lower(t.text);
    ++p_;
    if (kw == "resid" || kw == "resi") {
      term.resid = resid_value();
    } else if (kw == "segid" || kw == "segi") {
      term.segid = trimmed(value("segid"));
    } else if (kw == "name") {
      term.name = trimmed(value("name"));
    } else if (kw == "resname" || kw == "resn") {
      term.resname = trimmed(value("resname"));
    } else if (kw == "atom") {
      term.segid = trimmed(value("atom"));
      int line = peek().line;
      int r = integer(value("atom"), line, "resid");
      term.resid = std::make_pair(r, r);
      term.name = trimmed(value("atom"));
    } else if (kw == "not") {
      throw ParseError(path_, t.line, "'not' is not supported in restraint selections");
    } else {
      throw ParseError(path_, t.line,
                       "unsupported selection keyword '" + t.text +
                           "' (supported: resid, segid, name, resname, atom, and, or, parentheses)");
    }
    return {term};
  }

  std::vector<Tok> t_;
  const std::string& path_;
  const CancelCheck& cancel_;
  std::size_t tick_ = 0;  // poll_cancel's count
  std::size_t p_ = 0;
  int depth_ = 0;                        // parentheses open inside the current selection
  std::int64_t total_alternatives_ = 0;  // alternatives of the restraints read so far
  std::int64_t term_products_ = 0;       // 'and' term products of the selections read so far
  bool skip_other_ = false;              // 'assign' of other restraint kinds: skipped (.mr bundles)
  std::map<std::size_t, std::pair<std::size_t, int>> skipped_;  // selections → count, first line
  std::size_t other_exponents_ = 0;                             // dihedral exponents other than 2

 public:
  [[nodiscard]] std::size_t other_exponents() const { return other_exponents_; }
};

}  // namespace

RestraintSet parse_xplor_distance_restraints(std::string_view text, const std::string& path,
                                             const CancelCheck& cancel) {
  return parse_xplor_restraints(text, path, false, cancel);
}

RestraintSet parse_xplor_restraints(std::string_view text, const std::string& path, bool skip_other_statements,
                                    const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  Parser parser(tokenize(text, path), path, cancel);
  parser.skip_other(skip_other_statements);
  RestraintSet set = parser.run();
  if (parser.other_exponents() > 0)
    set.warnings.push_back(std::to_string(parser.other_exponents()) +
                           " dihedral restraints give an exponent other than 2: read as flat-bottom harmonic");
  return set;
}

RestraintSet read_xplor_distance_restraints(const std::string& path) {
  return parse_xplor_distance_restraints(read_text_file(path), path);
}

}  // namespace gemflow::io
