#pragma once
// Size limits of a workflow file, checked on its text before the YAML is parsed: yaml-cpp builds
// the whole document in memory first (about 3 KB and 30 µs per `editor:` entry, so a
// 2-million-entry section took 6 GB and minutes). Counted on the text:
// - entries of one top-level section (`nodes:`, `links:`, `editor:` ...): the lines at the
//   section's first indentation, or the items of a section written as one flow collection;
// - entries of the whole file: every line that holds YAML, plus every ',' of a flow collection.
// A 100 000-node chain with an editor position per node has 100 001 nodes, 200 001 links and
// about 500 000 entries in all. More is refused (load_workflow / parse_workflow: one error at
// the line that passes the limit, naming the section and its line).
#include <cstddef>

namespace gemflow {

inline constexpr std::size_t kMaxSectionEntries = 250000;
inline constexpr std::size_t kMaxWorkflowEntries = 1000000;
/// Longest node id, and exposed port name: ids are names people type, and they go into messages
/// (a link of a 3 MB id quoted in a diagnostic for each of 10⁵ other links was 300 GB of text).
inline constexpr std::size_t kMaxIdLength = 128;

}  // namespace gemflow
