#pragma once
// Helpers shared by the circlepack nodes: TriMesh → faces, PackError → InputError, report rows.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/circlepack/complex.hpp>
#include <gemflow/error.hpp>
#include <gemflow/types.hpp>

namespace gemflow::circlepack {

inline std::vector<Face> faces_of(const TriMesh& m) { return {m.faces.begin(), m.faces.end()}; }

/// Runs f, turning a PackError into an InputError naming the input port.
template <class F>
auto with_input(const char* port, F&& f) {
  try {
    return f();
  } catch (const PackError& e) {
    throw InputError(std::string("input '") + port + "': " + e.what());
  }
}

/// A metric/value table (io.write_table writes it as report.json).
class Report {
 public:
  Report() { t_.columns = {"metric", "value"}; }
  Report& add(std::string name, Table::Cell v) {
    t_.rows.push_back({std::move(name), std::move(v)});
    return *this;
  }
  Report& add(std::string name, std::size_t v) {
    return add(std::move(name), Table::Cell{static_cast<std::int64_t>(v)});
  }
  Report& add(std::string name, double v) { return add(std::move(name), Table::Cell{v}); }
  Report& add(std::string name, const char* v) { return add(std::move(name), Table::Cell{std::string(v)}); }
  Report& add(std::string name, std::string v) { return add(std::move(name), Table::Cell{std::move(v)}); }
  /// Appends another report's rows.
  Report& merge(const Table& t) {
    for (const auto& r : t.rows) t_.rows.push_back(r);
    return *this;
  }
  [[nodiscard]] Table table() const { return t_; }

 private:
  Table t_;
};

}  // namespace gemflow::circlepack
