// Xplor-NIH / CNS distance restraint (.tbl) reader.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "text.hpp"

namespace gemflow::io {

namespace {

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
};

bool is_kw(const Tok& t, std::initializer_list<const char*> names) {
  if (t.kind != Tok::Word) return false;
  std::string l = lower(t.text);
  for (const char* n : names)
    if (l == n) return true;
  return false;
}

const char* kControl[] = {"noe", "end", "set", "class", "ceiling", "averaging", "potential", "scale", "sqconstant",
                          "sqexponent", "soexponent", "sqoffset", "rswitch", "asymptote", "msoexponent", "mrswitch",
                          "reset", "nres", "bhig", "cv", "partition", "temperature", "monomers", "ncount", "distribute",
                          "den", "print", "evaluate"};

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
  Parser(std::vector<Tok> toks, const std::string& path) : t_(std::move(toks)), path_(path) {}

  RestraintSet run() {
    RestraintSet set;
    set.source = path_;
    set.format = "xplor";
    std::size_t skipped_control = 0;
    while (peek().kind != Tok::End) {
      const Tok& t = peek();
      if (is_kw(t, {"assign", "assi"})) {
        set.restraints.push_back(restraint(static_cast<int>(set.restraints.size()) + 1));
      } else if (is_control(t)) {
        ++skipped_control;
        ++p_;
        // Skip the statement's arguments up to the next assign (or the next control word).
        while (peek().kind != Tok::End && !is_kw(peek(), {"assign", "assi"}) && !is_control(peek())) ++p_;
      } else {
        throw ParseError(path_, t.line, "unexpected '" + t.text + "': expected 'assign'");
      }
    }
    if (set.restraints.empty()) throw ParseError(path_, 0, "no 'assign' statement (no distance restraints)");
    return set;
  }

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
                         "expected " + std::string(k == 0 ? "the distance d" : k == 1 ? "dminus" : "dplus") +
                             " (restraint 'assign' of line " + std::to_string(a.line) + "), found " +
                             (t.kind == Tok::End ? std::string("the end of the file") : "'" + t.text + "'"));
      ++p_;
    }
    r.target = v[0];
    r.lower = std::max(0.0, v[0] - v[1]);
    r.upper = v[0] + v[2];
    if (v[1] < 0 || v[2] < 0)
      throw ParseError(path_, a.line, "negative dminus or dplus in restraint " + std::to_string(id));
    if (v[0] < 0)  // QA: d = −1.8 gave an upper bound −0.1, refused later as "restraint −1"
      throw ParseError(path_, a.line, "negative distance d = " + std::to_string(v[0]) + " Å in restraint " +
                                          std::to_string(id));
    for (;;) {
      if (is_kw(peek(), {"weight"})) {
        ++p_;
        const Tok& w = peek();
        if (!number(w, r.weight)) throw ParseError(path_, w.line, "expected a number after 'weight', found '" + w.text + "'");
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

  static bool number(const Tok& t, double& out) {
    if (t.kind != Tok::Word) return false;
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    if (b != e && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, out);
    return ec == std::errc() && p == e && std::isfinite(out);
  }

  void add_pair(DistanceRestraint& r) {
    std::vector<Term> a = selection(), b = selection();
    for (const auto& ta : a)
      for (const auto& tb : b) {
        // A residue range expands to several selectors: one alternative per combination.
        std::vector<AtomSelector> as = expand_all(ta), bs = expand_all(tb);
        for (const auto& x : as)
          for (const auto& y : bs) r.alternatives.push_back({x, y, {}, {}});
      }
  }

  std::vector<AtomSelector> expand_all(const Term& t) const {
    if (!t.resid)
      throw ParseError(path_, t.line, "selection without 'resid' is not supported in distance restraints");
    auto [lo, hi] = *t.resid;
    if (hi < lo) throw ParseError(path_, t.line, "resid range " + std::to_string(lo) + ":" + std::to_string(hi) + " is empty");
    if (hi - lo > 10000) throw ParseError(path_, t.line, "resid range is too large");
    std::vector<AtomSelector> out;
    for (int n = lo; n <= hi; ++n) {
      AtomSelector s;
      s.chain = t.segid.value_or("");
      s.residue_number = n;
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
    while (is_kw(peek(), {"or"})) {
      ++p_;
      auto more = and_expr();
      terms.insert(terms.end(), more.begin(), more.end());
    }
    return terms;
  }

  std::vector<Term> and_expr() {
    auto terms = factor();
    while (is_kw(peek(), {"and"})) {
      ++p_;
      auto rhs = factor();
      std::vector<Term> product;
      for (const auto& x : terms)
        for (const auto& y : rhs)
          if (auto m = merge(x, y)) product.push_back(*m);
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
      throw ParseError(path_, t.line, std::string("expected a value after '") + keyword + "', found " +
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
      ++p_;
      auto terms = or_expr();
      const Tok& c = peek();
      if (c.kind != Tok::Close)
        throw ParseError(path_, c.line, "expected ')' to close the '(' of line " + std::to_string(t.line) + ", found " +
                                            (c.kind == Tok::End ? std::string("the end of the file") : "'" + c.text + "'"));
      ++p_;
      return terms;
    }
    if (t.kind != Tok::Word)
      throw ParseError(path_, t.line, "expected a selection keyword (resid, segid, name, resname), found " +
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
      throw ParseError(path_, t.line, "unsupported selection keyword '" + t.text +
                                          "' (supported: resid, segid, name, resname, atom, and, or, parentheses)");
    }
    return {term};
  }

  std::vector<Tok> t_;
  const std::string& path_;
  std::size_t p_ = 0;
};

}  // namespace

RestraintSet parse_xplor_distance_restraints(std::string_view text, const std::string& path) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  return Parser(tokenize(text, path), path).run();
}

RestraintSet read_xplor_distance_restraints(const std::string& path) {
  return parse_xplor_distance_restraints(read_text_file(path), path);
}

RestraintSet read_distance_restraints(const std::string& path, RestraintFormat format) {
  if (format == RestraintFormat::Auto) {
    auto dot = path.find_last_of('.');
    std::string e = dot == std::string::npos ? "" : lower(path.substr(dot));
    if (e == ".nef") format = RestraintFormat::Nef;
    else if (e == ".tbl" || e == ".xplor" || e == ".cns" || e == ".noe") format = RestraintFormat::Xplor;
    else
      throw ParseError(path, 0, "cannot tell the restraint format from the extension '" + e +
                                    "': use .nef or .tbl, or set the format");
  }
  return format == RestraintFormat::Nef ? read_nef_distance_restraints(path) : read_xplor_distance_restraints(path);
}

}  // namespace gemflow::io
