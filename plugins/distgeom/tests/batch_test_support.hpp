#pragma once
// Shared by batch_test.cpp and batch_gpu_test.cpp: RecordingContext (gemflow/testing.hpp), random
// bounds batches, the sample molecules and node helpers.
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/distgeom/batch.hpp>
#include <gemflow/io/molecules.hpp>
#include <gemflow/node.hpp>
#include <gemflow/plugin.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "register.hpp"

namespace gemflow::distgeom::batch_testing {

using gemflow::testing::RecordingContext;

inline std::string sample(const std::string& rel) { return std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/" + rel; }

inline const std::vector<std::string>& sample_molecule_files() {
  static const std::vector<std::string> f = {"molecules/biotite_TYR.sdf", "molecules/biotite_TYR.v3000.sdf",
                                             "molecules/biotite_HWB.sdf", "molecules/biotite_03F.sdf"};
  return f;
}

/// The batch nodes, registered as the plugin does.
struct Nodes {
  Registry registry;
  Nodes() {
    PluginRegistrar r(registry, "distgeom-test");
    register_batch_nodes(r);
  }
  std::unique_ptr<Node> make(const std::string& id) const { return gemflow::testing::make_node(registry, id); }
};

/// Random bounds of n points in a box of `side` Å: a fraction `known` of the pairs get
/// [d(1−u), d(1+u)] (u up to 10 %), the others [0, +∞) or [vdW-like floor, 100].
/// With `plant`, one pair's lower bound is raised far above its distance (inconsistent when
/// that pair is connected by other upper bounds).
inline DistanceBounds random_bounds(std::size_t n, std::mt19937_64& rng, bool plant = false) {
  std::uniform_real_distribution<double> box(0.0, 6.0 + std::cbrt(static_cast<double>(n)) * 2.0), u01(0.0, 1.0);
  std::vector<double> x(3 * n);
  for (auto& v : x) v = box(rng);
  DistanceBounds b;
  b.lower = Matrix<double>(n, n);
  b.upper = Matrix<double>(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    b.labels.push_back(std::string("A").append(std::to_string(i + 1)));
    for (std::size_t j = i + 1; j < n; ++j) {
      double d = 0;
      for (int c = 0; c < 3; ++c) d += std::pow(x[3 * i + c] - x[3 * j + c], 2);
      d = std::sqrt(d);
      double lo = 0, up = std::numeric_limits<double>::infinity();
      const double r = u01(rng);
      if (r < 0.5) {
        const double w = 0.1 * u01(rng);
        lo = d * (1 - w), up = d * (1 + w);
      } else if (r < 0.8) {
        lo = std::min(d, 1.0), up = std::max(d, 100.0);
      }
      b.lower(i, j) = b.lower(j, i) = lo;
      b.upper(i, j) = b.upper(j, i) = up;
    }
  }
  if (plant && n >= 3) {
    b.lower(0, n - 1) = b.lower(n - 1, 0) = 500.0;
    b.upper(0, n - 1) = b.upper(n - 1, 0) = 600.0;
    b.upper(0, 1) = b.upper(1, 0) = std::max(b.lower(0, 1), 3.0);
    b.upper(1, n - 1) = b.upper(n - 1, 1) = std::max(b.lower(1, n - 1), 3.0);
  }
  return b;
}

}  // namespace gemflow::distgeom::batch_testing
