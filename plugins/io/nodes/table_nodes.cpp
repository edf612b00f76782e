// io.write_table.
#include <charconv>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include <gemflow/types.hpp>

#include "register.hpp"

namespace gemflow::io {
namespace {

/// Shortest text that reads back to the same double; nan, inf, -inf for non-finite values.
std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? p : buf);
}

/// RFC 4180 field: quoted when it holds a comma, a quote, a line break or outer spaces.
std::string csv_field(const std::string& s) {
  const bool quote =
      s.find_first_of(",\"\r\n") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

class WriteTable final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_table",
            .version = 1,
            .title = "Write table",
            .category = "Input/Output",
            .doc =
                "Writes a Table (reports, statistics) to a file, format by extension, atomically. "
                ".json: {\"columns\": [names in order], \"rows\": [{name: value, ...}, ...]}; numbers as JSON "
                "numbers (shortest round-trip text), NaN and infinities as null. .csv: RFC 4180, a header row "
                "of column names, numbers in shortest round-trip text (nan, inf, -inf for non-finite), text "
                "quoted when it holds a comma, quote or line break.",
            .errors = "An unknown extension; a row whose length differs from the columns'.",
            .memory = "The file's text; no device memory.",
            .determinism = "Deterministic.",
            .references = "RFC 8259 (JSON), RFC 4180 (CSV)."};
  }
  Input<Table> table{this, "table", "Table to write"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Write,
                 "Output file: .json or .csv (relative: to the run's output folder)",
                 "",
                 {".json", ".csv"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const Table& t = *table;
    std::string ext = file.extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".json" && ext != ".csv")
      throw InputError("parameter 'path': unknown table file extension '" + ext + "' (expected .json or .csv)");
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      if (t.rows[r].size() != t.columns.size())
        throw InputError("input 'table': row " + std::to_string(r) + " has " + std::to_string(t.rows[r].size()) +
                         " cells, the table has " + std::to_string(t.columns.size()) + " columns");
    std::string text;
    if (ext == ".json") {
      nlohmann::ordered_json j;
      j["columns"] = t.columns;
      j["rows"] = nlohmann::ordered_json::array();
      for (const auto& row : t.rows) {
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < row.size(); ++c) std::visit([&](const auto& v) { o[t.columns[c]] = v; }, row[c]);
        j["rows"].push_back(std::move(o));
      }
      text = j.dump(2) + "\n";
    } else {
      for (std::size_t c = 0; c < t.columns.size(); ++c) text += (c ? "," : "") + csv_field(t.columns[c]);
      text += "\n";
      for (const auto& row : t.rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
          if (c) text += ",";
          if (const auto* d = std::get_if<double>(&row[c])) text += number_text(*d);
          else if (const auto* i = std::get_if<std::int64_t>(&row[c])) text += std::to_string(*i);
          else text += csv_field(std::get<std::string>(row[c]));
        }
        text += "\n";
      }
    }
    ctx.write_file(file, [&](std::ostream& out) { out << text; });
    ctx.info("wrote " + file.string() + " (" + std::to_string(t.rows.size()) + " rows)");
  }
};

}  // namespace

void register_table_nodes(PluginRegistrar& r) { r.add_node<WriteTable>(); }

}  // namespace gemflow::io
