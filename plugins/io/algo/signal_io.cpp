// Signal files (TCPD JSON, CSV/TSV/text, NPY) and segment files (gemflow/io/signal_io.hpp).
#include "gemflow/io/signal_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gemflow/text_location.hpp"

#include "gemflow/io/errors.hpp"
#include "gemflow/io/matrix_io.hpp"
#include "text.hpp"

namespace gemflow::io {

namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

/// Without leading and trailing blanks (spaces, tabs unless `sep` is a tab: there they delimit
/// empty fields) and a CR.
std::string_view trim(std::string_view s, char sep = ',') {
  auto blank = [&](char c) { return c == ' ' || (c == '\t' && sep != '\t'); };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && (blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_missing(std::string_view f) {
  return f.empty() || f == "NA" || f == "NaN" || f == "nan" || f == "null" || f == "?" || f == "N/A";
}

/// A finite number filling the whole field (leading '+' allowed), or false.
bool parse_number(std::string_view f, double& v) {
  if (!f.empty() && f.front() == '+') f.remove_prefix(1);
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  return ec == std::errc() && p == f.data() + f.size() && std::isfinite(v);
}

std::vector<std::string_view> split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  if (sep == ' ') {  // runs of spaces/tabs
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i >= line.size()) break;
      std::size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      out.push_back(line.substr(i, j - i));
      i = j;
    }
    return out;
  }
  std::size_t i = 0;
  while (true) {
    const auto j = line.find(sep, i);
    std::string_view f = trim(line.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.push_back(f);
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

/// Marks the NaN entries of a T × D matrix missing in Signal::valid and fills them by linear
/// interpolation per channel (the placeholder consumers that ignore the mask see).
void fill_missing(Signal& s, SignalFileInfo& info, const std::string& path) {
  const std::size_t T = s.length(), D = s.dims();
  std::vector<bool> row_missing(T, false);
  std::vector<std::uint8_t> valid(T * D, 1);
  for (std::size_t d = 0; d < D; ++d) {
    std::size_t last = T;  // last observed row
    for (std::size_t t = 0; t < T; ++t) {
      if (std::isnan(s.samples(t, d))) {
        row_missing[t] = true;
        valid[t * D + d] = 0;
        ++info.missing;
        continue;
      }
      if (last == T) {
        for (std::size_t u = 0; u < t; ++u) s.samples(u, d) = s.samples(t, d);
      } else {
        for (std::size_t u = last + 1; u < t; ++u) {
          const double w = double(u - last) / double(t - last);
          s.samples(u, d) = s.samples(last, d) * (1 - w) + s.samples(t, d) * w;
        }
      }
      last = t;
    }
    if (last == T) throw ParseError(path, 0, "channel '" + s.channels[d] + "' has no value (every sample is missing)");
    for (std::size_t u = last + 1; u < T; ++u) s.samples(u, d) = s.samples(last, d);
  }
  for (std::size_t t = 0; t < T; ++t)
    if (row_missing[t]) info.missing_rows.push_back(t);
  if (info.missing > 0) s.valid = std::move(valid);
}

int line_at(std::string_view text, std::size_t byte) { return line_of_byte(text, byte); }

Signal parse_tcpd(std::string_view text, const std::string& path, SignalFileInfo& info, const CancelCheck& cancel) {
  using nlohmann::json;
  info.format = "tcpd-json";
  json j;
  std::size_t tick = 0;
  try {
    // the callback sees every value as it is parsed: a long parse can be cancelled
    j = json::parse(text.begin(), text.end(), [&](int, json::parse_event_t, json&) {
      detail::poll_cancel(cancel, tick);
      return true;
    });
  } catch (const json::parse_error& e) {
    throw ParseError(path, line_at(text, e.byte > 0 ? e.byte - 1 : 0), std::string("JSON syntax: ") + e.what());
  } catch (const json::exception& e) {  // out_of_range 406: a number beyond double's range
    throw ParseError(path, line_of_quoted_token(text, e.what()), std::string("JSON value: ") + e.what());
  }
  auto where = [&](const std::string& key) {  // the line of a key's first occurrence, for messages
    const auto p = text.find("\"" + key + "\"");
    return p == std::string_view::npos ? 0 : line_at(text, p);
  };
  if (!j.is_object()) throw ParseError(path, 1, "expected a TCPD dataset object {\"series\": [...], ...}");
  if (j.contains("name") && j["name"].is_string()) info.name = j["name"].get<std::string>();
  if (!j.contains("series") || !j["series"].is_array() || j["series"].empty())
    throw ParseError(path, where("series"), "no \"series\" array with at least one channel");
  const auto& series = j["series"];
  const std::size_t D = series.size();
  std::size_t T = 0;
  // lines of the "raw" arrays' values, to name a bad value's line
  std::size_t search = 0;
  std::vector<std::vector<int>> value_lines(D);
  const std::size_t series_key = text.find("\"series\"");
  // line_at for the arrays' starts, which only move forward: the newlines before each are
  // counted once in all, not from the file's start for every series
  std::size_t counted = 0;
  int counted_line = 1;
  const auto line_onward = [&](std::size_t byte) {
    byte = std::min(byte, text.size());
    if (byte < counted) return line_at(text, byte);
    counted_line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted),
                                                text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'));
    counted = byte;
    return counted_line;
  };
  for (std::size_t d = 0; d < D; ++d) {
    const auto& s = series[d];
    const auto raw_pos = text.find("\"raw\"", series_key == std::string_view::npos ? 0 : std::max(search, series_key));
    if (!s.is_object() || !s.contains("raw") || !s["raw"].is_array())
      throw ParseError(path, raw_pos == std::string_view::npos ? where("series") : line_at(text, raw_pos),
                       "series " + std::to_string(d) + " has no \"raw\" array of values");
    if (d == 0) T = s["raw"].size();
    else if (s["raw"].size() != T)
      throw ParseError(path, line_at(text, raw_pos),
                       "series " + std::to_string(d) + " has " + std::to_string(s["raw"].size()) +
                           " values, series 0 has " + std::to_string(T));
    // walk the raw array's text (flat: numbers and null) to find the line of each value
    std::size_t p = text.find('[', raw_pos);
    int line = line_onward(p);
    for (std::size_t t = 0; t < T && p != std::string_view::npos; ++t) {
      detail::poll_cancel(cancel, tick);
      ++p;  // over '[' or ','
      while (p < text.size() &&
             (text[p] == ' ' || text[p] == '\n' || text[p] == '\t' || text[p] == '\r' || text[p] == ','))
        line += text[p] == '\n', ++p;
      value_lines[d].push_back(line);
      while (p < text.size() && text[p] != ',' && text[p] != ']') ++p;  // to the value's end
    }
    search = p == std::string_view::npos ? text.size() : p;
  }
  if (T == 0) throw ParseError(path, where("raw"), "the series have no values");
  if (j.contains("n_obs") && j["n_obs"].is_number_integer() && j["n_obs"].get<long long>() != static_cast<long long>(T))
    throw ParseError(path, where("n_obs"),
                     "n_obs is " + j["n_obs"].dump() + " but the series have " + std::to_string(T) + " values");
  if (j.contains("n_dim") && j["n_dim"].is_number_integer() && j["n_dim"].get<long long>() != static_cast<long long>(D))
    throw ParseError(path, where("n_dim"),
                     "n_dim is " + j["n_dim"].dump() + " but there are " + std::to_string(D) + " series");
  Signal sig;
  sig.samples = Matrix<double>(T, D);
  for (std::size_t d = 0; d < D; ++d) {
    const auto& s = series[d];
    std::string label = s.contains("label") && s["label"].is_string() ? s["label"].get<std::string>() : "";
    sig.channels.push_back(label.empty() ? "V" + std::to_string(d + 1) : label);
    sig.units.emplace_back();
    for (std::size_t t = 0; t < T; ++t) {
      const auto& v = s["raw"][t];
      const int ln = t < value_lines[d].size() ? value_lines[d][t] : 0;
      if (v.is_null()) sig.samples(t, d) = kMissing;
      else if (v.is_number()) {
        const double x = v.get<double>();
        if (!std::isfinite(x))
          throw ParseError(path, ln,
                           "value " + std::to_string(t) + " of series " + std::to_string(d) + " is not finite");
        sig.samples(t, d) = x;
      } else {
        throw ParseError(path, ln,
                         "value " + std::to_string(t) + " of series '" + sig.channels[d] + "' is " + v.dump() +
                             ", not a number or null");
      }
    }
  }
  info.lines = value_lines[0];
  return sig;
}

Signal parse_text(std::string_view text, const std::string& path, const std::string& ext, const ReadSignalOptions& o,
                  SignalFileInfo& info) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  char sep = ext == ".tsv" ? '\t' : ',';
  info.format = ext == ".tsv" ? "tsv" : ext == ".csv" ? "csv" : "text";
  if (ext != ".csv" && ext != ".tsv") {  // .txt: commas if the first data line has one, else whitespace
    sep = ' ';
    std::size_t p = 0;
    while (p < text.size()) {
      const auto e = text.find('\n', p);
      const auto l = trim(text.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
      if (!l.empty() && l.front() != '#') {
        if (l.find(',') != std::string_view::npos) sep = ',';
        break;
      }
      if (e == std::string_view::npos) break;
      p = e + 1;
    }
  }
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::size_t cols = 0;
  int first_line = 0, line = 0;
  // columns: `time_column` and `columns` name header entries or 1-based numbers
  std::size_t tcol = 0;
  std::vector<bool> use;
  auto column_of = [&](const std::string& key, const char* what) {
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == key) return c;
    std::size_t n = 0;
    auto [q, ec] = std::from_chars(key.data(), key.data() + key.size(), n);
    if (ec == std::errc() && q == key.data() + key.size() && n >= 1 && n <= cols) return n - 1;
    throw ParseError(
        path, first_line,
        std::string(what) + " '" + key + "' is neither a header name nor a column number 1.." + std::to_string(cols));
  };
  auto resolve_columns = [&] {
    tcol = o.time_column.empty() ? cols : column_of(o.time_column, "time column");
    use.assign(cols, o.columns.empty());
    std::size_t from = 0;
    while (from < o.columns.size()) {
      auto to = o.columns.find(',', from);
      if (to == std::string::npos) to = o.columns.size();
      const std::string key(trim(std::string_view(o.columns).substr(from, to - from)));
      if (!key.empty()) use[column_of(key, "column")] = true;
      from = to + 1;
    }
    if (tcol < cols) use[tcol] = false;
    if (std::find(use.begin(), use.end(), true) == use.end())
      throw ParseError(path, first_line, "no signal channel left (the only column is the time column)");
  };
  std::size_t tick = 0, p = 0;
  while (p <= text.size()) {
    detail::poll_cancel(o.cancel, tick);
    const auto e = text.find('\n', p);
    const std::string_view raw = text.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p);
    ++line;
    p = e == std::string_view::npos ? text.size() + 1 : e + 1;
    const auto l = trim(raw, sep);
    if (trim(l).empty() || l.front() == '#') continue;
    const auto fields = split(l, sep);
    if (cols == 0) {
      cols = fields.size();
      first_line = line;
      bool any_number = false;
      double v;
      for (auto f : fields) any_number |= parse_number(f, v);
      bool all_missing = true;
      for (auto f : fields) all_missing &= is_missing(f);
      if (!any_number && !all_missing) {
        for (auto f : fields) names.emplace_back(f);
        info.header = true;
        continue;
      }
    }
    if (fields.size() != cols)
      throw ParseError(path, line,
                       "row has " + std::to_string(fields.size()) + " fields, the row of line " +
                           std::to_string(first_line) + " has " + std::to_string(cols));
    if (use.empty()) resolve_columns();
    std::vector<double> r(cols, kMissing);
    for (std::size_t c = 0; c < cols; ++c) {
      if (!use[c] && c != tcol) continue;  // a column not asked for: not read (it may hold text)
      if (is_missing(fields[c])) r[c] = kMissing;
      else if (!parse_number(fields[c], r[c]))
        throw ParseError(path, line,
                         "field " + std::to_string(c + 1) + " '" + std::string(fields[c].substr(0, 40)) +
                             "' is not a number (missing values: empty, NA, NaN, null, ?; select the numeric "
                             "columns with 'columns')");
    }
    rows.push_back(std::move(r));
    info.lines.push_back(line);
  }
  if (rows.empty()) throw ParseError(path, line, "no data rows");
  const std::size_t D = static_cast<std::size_t>(std::count(use.begin(), use.end(), true));
  Signal sig;
  sig.samples = Matrix<double>(rows.size(), D);
  for (std::size_t c = 0, d = 0; c < cols; ++c) {
    if (!use[c]) continue;
    sig.channels.push_back(c < names.size() && !names[c].empty() ? names[c] : "V" + std::to_string(d + 1));
    sig.units.emplace_back();
    for (std::size_t t = 0; t < rows.size(); ++t) sig.samples(t, d) = rows[t][c];
    ++d;
  }
  if (tcol < cols) {
    for (std::size_t t = 0; t < rows.size(); ++t) {
      const double v = rows[t][tcol];
      if (std::isnan(v)) throw ParseError(path, info.lines[t], "the time is missing");
      if (t > 0 && !(v > sig.times.back()))
        throw ParseError(path, info.lines[t],
                         "time " + std::to_string(v) + " does not increase (line " + std::to_string(info.lines[t - 1]) +
                             ": " + std::to_string(sig.times.back()) + ")");
      sig.times.push_back(v);
    }
    sig.sample_rate = 0;
  }
  return sig;
}

}  // namespace

Signal parse_signal(std::string_view bytes, const std::string& path, const ReadSignalOptions& o, SignalFileInfo* out) {
  SignalFileInfo info;
  const std::string ext = detail::lower_ext(path);
  Signal s;
  if (ext == ".json") {
    s = parse_tcpd(detail::checked_text(bytes, path), path, info, o.cancel);
  } else if (ext == ".csv" || ext == ".tsv" || ext == ".txt" || ext == ".dat") {
    s = parse_text(bytes, path, ext, o, info);
  } else if (ext == ".npy") {
    MatrixFileInfo mi;
    Matrix<double> m = parse_npy(bytes, path, &mi, o.cancel, /*vector_as_column=*/true);
    info.format = "npy";
    s.samples = std::move(m);
    for (std::size_t d = 0; d < s.dims(); ++d)
      s.channels.push_back("V" + std::to_string(d + 1)), s.units.emplace_back();
  } else {
    throw ParseError(path, 0, "unknown signal file extension '" + ext + "' (expected .json, .csv, .tsv, .txt or .npy)");
  }
  fill_missing(s, info, path);
  if (out) *out = std::move(info);
  return s;
}

Signal read_signal(const std::string& path, const ReadSignalOptions& o, SignalFileInfo* info) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_signal(ss.str(), path, o, info);
}

namespace {
std::string num(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? p : buf);
}
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}
}  // namespace

void write_segments(std::ostream& out, const Segmentation& s, const std::string& path) {
  const std::string ext = detail::lower_ext(path);
  if (ext != ".csv" && ext != ".json")
    throw std::invalid_argument("unknown segments file extension '" + ext + "' (expected .csv or .json)");
  for (std::size_t i = 0; i < s.segments.size(); ++i) {
    const auto& g = s.segments[i];
    if (g.start >= g.end || g.end > s.length || g.label >= s.labels.size() || std::isnan(g.score) ||
        (i > 0 && g.start < s.segments[i - 1].end))
      throw std::invalid_argument("segment " + std::to_string(i) + " [" + std::to_string(g.start) + ", " +
                                  std::to_string(g.end) + ") label " + std::to_string(g.label) +
                                  " is not a valid segment of this segmentation");
  }
  const bool times = s.sample_rate > 0;
  if (ext == ".csv") {
    out << "start,end,label,label_name,score" << (times ? ",start_time,end_time" : "") << "\n";
    for (const auto& g : s.segments) {
      out << g.start << ',' << g.end << ',' << g.label << ',' << csv_field(s.labels[g.label]) << ',' << num(g.score);
      if (times) out << ',' << num(double(g.start) / s.sample_rate) << ',' << num(double(g.end) / s.sample_rate);
      out << '\n';
    }
    return;
  }
  nlohmann::ordered_json j;
  j["length"] = s.length;
  j["sample_rate"] = s.sample_rate;
  j["labels"] = s.labels;
  j["segments"] = nlohmann::ordered_json::array();
  for (const auto& g : s.segments) {
    nlohmann::ordered_json o;
    o["start"] = g.start;
    o["end"] = g.end;
    o["label"] = g.label;
    o["label_name"] = s.labels[g.label];
    if (std::isfinite(g.score)) o["score"] = g.score;
    else o["score"] = nullptr;
    j["segments"].push_back(std::move(o));
  }
  out << j.dump(2) << "\n";
}

}  // namespace gemflow::io
