#pragma once
// Small heterogeneous table, e.g. reports and statistics.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace gemflow {

/// Column-named table; every row has columns.size() cells. Cells are numbers or text.
struct Table {
  using Cell = std::variant<double, std::int64_t, std::string>;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;

  /// Index of a column, or -1.
  [[nodiscard]] int column(const std::string& name) const;
};

}  // namespace gemflow
