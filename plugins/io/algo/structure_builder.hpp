#pragma once
// Internal: assembles models of raw atom records into a Structure (altlocs, model checks).
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/structure_io.hpp"

namespace gemflow::io::detail {

struct RawAtom {
  Atom atom;
  std::string altloc;
  Vec3 xyz{};
  int line = 0;
};

class StructureBuilder {
 public:
  explicit StructureBuilder(std::string path) : path_(std::move(path)) {}
  void begin_model(int serial, int line);
  void add(RawAtom a) { models_.back().atoms.push_back(std::move(a)); }
  [[nodiscard]] bool has_models() const { return !models_.empty(); }
  /// Selects altlocs, checks models against the first one, applies options.model.
  Structure finish(const ReadStructureOptions& options, std::vector<std::string>* warnings,
                   std::vector<int>* kept_serials = nullptr);

 private:
  struct Model {
    int serial = 1;
    int line = 0;
    std::vector<RawAtom> atoms;
  };
  std::string path_;
  std::vector<Model> models_;
  std::unordered_map<int, int> model_lines_;  ///< serial → line of its first model
};

/// Element from an atom name (see read_pdb's doc); `pdb_name4` is the raw 4-column field or
/// "" when unknown (mmCIF), `hetero` the record kind.
std::string infer_element(const std::string& name, const std::string& pdb_name4, bool hetero);
std::string upper(std::string s);
std::string trim(std::string_view s);

}  // namespace gemflow::io::detail
