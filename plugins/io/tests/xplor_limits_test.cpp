// The XPLOR/CNS .tbl reader on hostile input: every selection it can be asked to expand is
// bounded before it is expanded, and each refusal names the file and line (reproducers of the
// reliability review: resid ranges over the whole int range, range × range products, 'and'
// chains of repeated 'or's, 10 000 nested parentheses, bounds of 1e308).
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "io_test_support.hpp"

using namespace gemflow::io;

namespace {

std::string error_of(const std::string& text, const std::string& path = "h.tbl") {
  try {
    (void)parse_xplor_distance_restraints(text, path);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no ParseError)";
}

}  // namespace

TEST(XplorLimits, ResidRangeOverTheWholeIntRangeIsRefusedWithItsLine) {
  auto e = error_of("assign (resid 1 and name HA)\n (resid -2147483648:2147483647 and name HA) 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:2:");
  EXPECT_CONTAINS(e, "spans 4294967296 residues");
  // The same range spelt with a separate ':' token.
  EXPECT_CONTAINS(error_of("assign (resid 1) (resid -2147483648 :2147483647) 3 1 1\n"), "spans 4294967296");
}

TEST(XplorLimits, ResidAtTheEndsOfTheIntRangeReadsAsOneResidue) {
  // Iterated value by value with an int, resid INT_MAX never ended.
  auto set = parse_xplor_distance_restraints(
      "assign (resid 2147483647 and name HA) (resid -2147483648 and name HB) 3 1 1\n", "m.tbl");
  ASSERT_EQ(set.restraints.size(), 1u);
  ASSERT_EQ(set.restraints[0].alternatives.size(), 1u);
  EXPECT_EQ(set.restraints[0].alternatives[0].a.residue_number, INT_MAX);
  EXPECT_EQ(set.restraints[0].alternatives[0].b.residue_number, INT_MIN);
  // A range ending at INT_MAX is as finite as any other.
  auto r = parse_xplor_distance_restraints("assign (resid 2147483645:2147483647) (resid 1) 3 1 1\n", "m.tbl");
  EXPECT_EQ(r.restraints[0].alternatives.size(), 3u);
  EXPECT_EQ(r.restraints[0].alternatives[2].a.residue_number, INT_MAX);
}

TEST(XplorLimits, RangeProductIsCountedBeforeItIsExpanded) {
  auto e = error_of("assign (resid 1:10001) (resid 1:10001) 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:1:");
  EXPECT_CONTAINS(e, "spans 10001 residues");
  e = error_of("\nassign (resid 1:5000) (resid 1:5000) 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:2:");
  EXPECT_CONTAINS(e, "expands to 25000000 atom-pair alternatives");
  // Products within the limit are what ambiguous restraints legitimately use.
  auto ok = parse_xplor_distance_restraints("assign (resid 1:50) (resid 101:150) 3 1 1\n", "ok.tbl");
  EXPECT_EQ(ok.restraints[0].alternatives.size(), 2500u);
}

TEST(XplorLimits, RepeatedAlternativesDoNotDoubleAtEveryAnd) {
  std::string sel = "(name CA or name CA)";
  for (int k = 0; k < 23; ++k) sel += " and (name CA or name CA)";
  auto set =
      parse_xplor_distance_restraints("assign (resid 1 and (" + sel + ")) (resid 2 and name CA) 3 1 1\n", "a.tbl");
  ASSERT_EQ(set.restraints[0].alternatives.size(), 1u);
  EXPECT_EQ(set.restraints[0].alternatives[0].a.atom, "CA");
  // Distinct alternatives that multiply past the limit are refused where the 'and' is.
  std::string wide =
      "(name A1 or name A2 or name A3 or name A4 or name A5 or name A6 or name A7 or name A8 "
      "or name A9 or name A10)";
  std::string seg =
      "(segid S1 or segid S2 or segid S3 or segid S4 or segid S5 or segid S6 or segid S7 or "
      "segid S8 or segid S9 or segid S10)";
  std::string res =
      "(resn R1 or resn R2 or resn R3 or resn R4 or resn R5 or resn R6 or resn R7 or resn R8 "
      "or resn R9 or resn R10)";
  std::string rid =
      "(resid 1 or resid 2 or resid 3 or resid 4 or resid 5 or resid 6 or resid 7 or resid 8 "
      "or resid 9 or resid 10 or resid 11)";
  auto e = error_of("assign (" + wide + " and " + seg + " and " + res + "\n and " + rid + ") (resid 2) 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:2:");
  EXPECT_CONTAINS(e, "selection expands to 11000 alternatives (at most 10000)");
}

// Each 'and' within its bound, but a chain of them over 1000 alternatives: 10⁵ 'and's (2 MB) would
// be 10⁸ term products (a minute); the file's products are bounded, at the 'and' that passes.
TEST(XplorLimits, LongAndChainsOverManyAlternativesAreBounded) {
  std::string many = "((resid 1";
  for (int k = 2; k <= 1000; ++k) many += " or resid " + std::to_string(k);
  many += ")";
  for (int k = 0; k < 3000; ++k) many += "\n and segid \"    \"";
  const std::string e = error_of("assign " + many + ") (resid 2) 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:2002:");
  EXPECT_CONTAINS(e, "more than 2000000 products of 'and'-ed terms");
  // chains that people write are far below
  EXPECT_EQ(parse_xplor_distance_restraints("assign (resid 1:50 and name HA and segid \"    \") (resid 2) 3 1 1\n",
                                            "ok.tbl")
                .restraints.size(),
            1u);
}

TEST(XplorLimits, DeepParenthesesAreAnErrorNotAStackOverflow) {
  std::string open(10000, '('), close(10000, ')');
  auto e = error_of("assign (resid 1) \n" + open + "resid 2" + close + " 3 1 1\n");
  EXPECT_CONTAINS(e, "h.tbl:2:");
  EXPECT_CONTAINS(e, "nested deeper than 100");
  // Nesting that people write is accepted.
  std::string o(20, '('), c(20, ')');
  auto set =
      parse_xplor_distance_restraints("assign (resid 1) (" + o + "resid 2 and name HA" + c + ") 3 1 1\n", "n.tbl");
  EXPECT_EQ(set.restraints[0].alternatives.size(), 1u);
}

TEST(XplorLimits, HugeAndInfiniteBoundsAreRefusedWithTheirLine) {
  auto e = error_of("assign (resid 1) (resid 2) 3 1 1\nassign (resid 1) (resid 2) 1e308 1 1e308\n");
  EXPECT_CONTAINS(e, "h.tbl:2:");
  EXPECT_CONTAINS(e, "restraint 2");
  EXPECT_CONTAINS(e, "distance bound above 10000");
  EXPECT_CONTAINS(e, "(d 1e+308, dminus 1, dplus 1e+308)");  // a user's report: 309 digits before
  EXPECT_CONTAINS(error_of("assign (resid 1) (resid 2) 3 1e300 1\n"), "distance bound above");
  EXPECT_CONTAINS(error_of("assign (resid 1) (resid 2) 3 1 20000\n"), "h.tbl:1:");
  // Overflowing numbers are not numbers.
  EXPECT_CONTAINS(error_of("assign (resid 1) (resid 2) 1e999 1 1\n"), "expected the distance d");
}

TEST(XplorLimits, TotalAlternativesOfAFileAreBounded) {
  // 30 restraints of 10 000 alternatives each stay under the per-restraint limit but not the
  // file's (real files: 2KPU's ARIA restraints expand to 1982 alternatives in all).
  std::string text;
  for (int k = 0; k < 30; ++k) text += "assign (resid 1:100) (resid 1:100) 3 1 1\n";
  auto e = error_of(text);
  EXPECT_CONTAINS(e, "h.tbl:21:");
  EXPECT_CONTAINS(e, "more than 200000 atom-pair alternatives");
}
