// Workflows of 50 000 and 100 000 nodes: loading, validation, the run's path checks and its scheduling take
// time linear (or n log n) in the size of the workflow. Quadratic code (a scan of every node per
// link, a comparison of every output file with every other) took minutes here (122 s for
// `gemflow validate` of the 100 000-node chain): the CTest TIMEOUT of these tests (see
// CMakeLists.txt) turns that into a failure; the assertions check the results themselves.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gemflow/executor.hpp"
#include "test_support.hpp"

namespace gemflow {
namespace {

using test::all;
using test::testnodes;

constexpr int kNodes = 100000;
constexpr int kChainNodes = 50000;  // in YAML: the loader's part (2 s here) would take minutes if quadratic

// c → n0 → n1 → … → n(N-1), each n also fed by c (the reproducer of generate_large_inputs.sh),
// with an editor position for every node and a test.write_text at the end.
std::string chain_yaml(int n) {
  std::string s = "gemflow: 1\nname: chain\nnodes:\n  c: {type: test.constant}\n";
  for (int i = 0; i < n; ++i) s += fmt::format("  n{}: {{type: test.add}}\n", i);
  s += fmt::format("  w: {{type: test.write_text, params: {{path: chain.txt}}}}\n");
  s += "links:\n  - c.value -> n0.a\n  - c.value -> n0.b\n";
  for (int i = 1; i < n; ++i) s += fmt::format("  - n{}.sum -> n{}.a\n  - c.value -> n{}.b\n", i - 1, i, i);
  s += fmt::format("  - n{}.sum -> w.value\neditor:\n", n - 1);
  for (int i = 0; i < n; ++i) s += fmt::format("  n{}: {{pos: [{}, 0]}}\n", i, i);
  return s;
}

TEST(Scale, AFiftyThousandNodeChainLoadsAndValidates) {
  constexpr int kNodes = kChainNodes;
  const auto r = parse_workflow(chain_yaml(kNodes), "chain.yaml", testnodes());
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << all(r.diagnostics);
  const Workflow& wf = *r.workflow;
  ASSERT_EQ(wf.nodes.size(), static_cast<std::size_t>(kNodes) + 2);
  EXPECT_EQ(wf.links.size(), 2u * kNodes + 1);
  ASSERT_TRUE(wf.nodes[kNodes].pos);
  EXPECT_EQ((*wf.nodes[kNodes].pos)[0], kNodes - 1.0);
  EXPECT_TRUE(validate(wf, testnodes()).empty());
  const auto order = topological_order(wf);
  ASSERT_EQ(order.size(), wf.nodes.size());
  EXPECT_EQ(order.front(), "c");
  EXPECT_EQ(order.back(), "w");
  EXPECT_TRUE(check_run_paths(wf, testnodes(), "/tmp/gemflow-scale-out").empty());
}

// Many output files: each compared with the others by a key, not pairwise.
TEST(Scale, ManyOutputFilesAreCheckedOnce) {
  Workflow wf;
  for (int i = 0; i < 20000; ++i) {
    NodeInstance n;
    n.id = fmt::format("w{}", i);
    n.type = "test.write_text";
    n.set_param("path", fmt::format("f{}.txt", i % 19999));  // w19999 writes f0.txt again
    wf.nodes.push_back(std::move(n));
  }
  const auto ds = check_run_paths(wf, testnodes(), "/tmp/gemflow-scale-out");
  ASSERT_EQ(ds.size(), 1u) << all(ds);
  EXPECT_EQ(ds[0].node, "w19999");
  EXPECT_EQ(ds[0].message, "writes /tmp/gemflow-scale-out/f0.txt, which node 'w0' (parameter 'path') writes too");
}

// The head of a 100 000-node chain fails: every node after it is skipped (a recursion per node
// overflowed the stack).
TEST(Scale, AFailureAtTheHeadOfALongChainSkipsTheRest) {
  Workflow wf;
  NodeInstance head;
  head.id = "head";
  head.type = "test.fail";
  wf.nodes.push_back(head);
  for (int i = 0; i < kNodes; ++i) {
    NodeInstance n;
    n.id = fmt::format("s{}", i);
    n.type = "test.sleep";
    n.set_param("seconds", 0.0);
    wf.links.push_back({i == 0 ? "head" : fmt::format("s{}", i - 1), "out", n.id, "in", {}});
    wf.nodes.push_back(std::move(n));
  }
  test::TempDir dir;
  RunOptions o;
  o.out_dir = dir / "out";
  o.write_provenance = false;
  const RunResult r = run_workflow(wf, testnodes(), o);
  ASSERT_TRUE(r.diagnostics.empty()) << all(r.diagnostics);
  EXPECT_EQ(r.nodes.at("head").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("s0").state, NodeState::Skipped);
  EXPECT_EQ(r.nodes.at("s0").error, "skipped: upstream node 'head' failed");
  EXPECT_EQ(r.nodes.at(fmt::format("s{}", kNodes - 1)).state, NodeState::Skipped);
  EXPECT_EQ(r.nodes.at(fmt::format("s{}", kNodes - 1)).error,
            fmt::format("skipped: upstream node 's{}' did not run", kNodes - 2));
}

}  // namespace
}  // namespace gemflow
