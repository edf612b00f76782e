#pragma once
// Host-side plan of the chunked forward and forward-backward passes for K = 1 (plain C++; used
// by semicrf_cuda.cu and tested on the CPU).
//
// With K = 1 every segment is one sample and the semi-CRF is an HMM: α(t, ·) = α(t − 1, ·) ⊗ M_t
// in the log semiring, M_t[c', c] = Tr[c', c] + e(t, c). A product of consecutive M_t is again a
// C × C matrix, so the steps of one sequence split into chunks whose products are computed in
// parallel (one thread block each), then applied to α in order by one warp per sequence: the
// temporal parallelisation of HMM inference by the associative scan (Hassan, Särkkä &
// García-Fernández, "Temporal parallelization of inference in hidden Markov models", IEEE Trans.
// Signal Process. 69, 4875–4887, 2021), here with one level of chunks. The same products give β
// at the chunks' ends (β(first) = P ⊗ β(last)), after which every chunk's marginals and gradient
// sums are independent. The results are those of the sequential recurrence (the same sums,
// bracketed differently). For K > 1 the state carried from one chunk to the next is the K·C ring,
// and a chunk's exact transfer needs the recurrence run from each of its K·C entries (Rush,
// "Torch-Struct", ACL 2020, scans semi-Markov models with such (K·C)² matrices): K·C times the
// sequential work, so K > 1 stays sequential per sequence.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace gemflow::semicrf::cuda::detail {

/// Steps t = first + 1 .. last of sequence b (1 ≤ first < last ≤ T_b).
struct ScanChunk {
  int b = 0, first = 0, last = 0;
};

/// Labels the chunk kernels take (one warp lane per label).
constexpr std::size_t kScanMaxLabels = 32;
/// Longest chunk: the backward pass keeps a chunk's α rows in shared memory, 32 doubles each
/// (66 KiB at 256 steps).
constexpr std::size_t kScanMaxSteps = 256;

/// The chunk length of the K = 1 scan for this batch, or 0 when the sequential kernel should run:
/// K ≠ 1, C > 32, or a batch of at least `sms` sequences (one block per sequence fills the device
/// already). Chunks are sized so that the whole batch makes about 4 blocks per SM, and are at
/// least 32 steps long (shorter ones make the ordered combination the longer part) and at most
/// kScanMaxSteps.
inline std::size_t scan_chunk_length(const std::vector<std::size_t>& lengths, std::size_t K, std::size_t C, int sms) {
  if (K != 1 || C == 0 || C > kScanMaxLabels || sms <= 0 || lengths.size() >= static_cast<std::size_t>(sms)) return 0;
  std::size_t steps = 0;
  for (auto T : lengths) steps += T > 1 ? T - 1 : 0;
  if (steps == 0) return 0;
  const std::size_t blocks = 4 * static_cast<std::size_t>(sms);
  return std::clamp<std::size_t>((steps + blocks - 1) / blocks, 32, kScanMaxSteps);
}

/// The chunks of every sequence in order (steps 2..T_b of sequence b, `length` steps each, the
/// last one shorter), and per sequence the index of its first chunk (B + 1 entries).
inline std::vector<ScanChunk> scan_chunks(const std::vector<std::size_t>& lengths, std::size_t length,
                                          std::vector<long long>& first_chunk) {
  std::vector<ScanChunk> out;
  first_chunk.assign(lengths.size() + 1, 0);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const std::size_t T = lengths[b];
    for (std::size_t first = 1; first < T; first += length)
      out.push_back({static_cast<int>(b), static_cast<int>(first), static_cast<int>(std::min(T, first + length))});
    first_chunk[b + 1] = static_cast<long long>(out.size());
  }
  return out;
}

}  // namespace gemflow::semicrf::cuda::detail
