// libFuzzer harness: the signal reader (TCPD JSON, CSV, TSV, text; see fuzz_support.hpp for what
// counts as a finding). The format follows the content, so that the seed files keep theirs:
// '{' first → .json, a tab → .tsv, a comma → .csv, else .txt; a '@' first byte also reads
// column 1 as the time axis.
#include "fuzz_support.hpp"
#include "gemflow/io/signal_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const char* ext = !text.empty() && text.front() == '{'        ? ".json"
                    : text.find('\t') != std::string_view::npos ? ".tsv"
                    : text.find(',') != std::string_view::npos  ? ".csv"
                                                                : ".txt";
  const std::string name = fuzz::kInputName + ext;
  return fuzz::run(data, size, [&](std::string_view t) {
    ReadSignalOptions o;
    if (!t.empty() && t.front() == '@') o.time_column = "1";
    (void)parse_signal(t, name, o);
  });
}
