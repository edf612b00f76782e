#pragma once
// Helpers shared by the circlepack CPU and GPU tests.
#include <cstdio>
#include <string>

#include <gemflow/circlepack/pack.hpp>

namespace gemflow::circlepack::test {

/// A PackResult's iterations, CG iterations, final error and convergence history, for assertion
/// messages: a failed convergence check then says how the run ended.
inline std::string describe(const PackResult& r) {
  char head[160];
  std::snprintf(head, sizeof head, "%zu iterations, %zu CG iterations, error %.3g, history:", r.iterations,
                r.inner_iterations, r.error);
  std::string s = head;
  for (std::size_t k = 0; k < r.history_error.size(); ++k) {
    char e[48];
    std::snprintf(e, sizeof e, " %zu:%.3g", r.history_iteration[k], r.history_error[k]);
    s += e;
  }
  return s;
}

}  // namespace gemflow::circlepack::test
