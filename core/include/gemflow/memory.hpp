#pragma once
// Host memory checks before large allocations: a request that cannot fit fails with a message
// naming what needed how much, instead of the kernel's out-of-memory killer ending the process
// (Linux overcommits, so a large std::vector can be granted and then killed as it is filled).
#include <cstddef>
#include <optional>
#include <string>

#include "gemflow/error.hpp"

namespace gemflow {

/// Not enough memory for a requested allocation. `what()` names the request, the bytes it needs
/// and the bytes available.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

/// Bytes a new allocation can take now without swapping: Linux's MemAvailable (/proc/meminfo),
/// capped by the cgroup v2 limit of this process (memory.max − memory.current) and by the
/// address-space limit (RLIMIT_AS, `ulimit -v`, less what the process maps) when there are
/// such limits, and by GEMFLOW_MEMORY_LIMIT (bytes, or with a K/M/G/T suffix: "2G") when set
/// (shared machines; the fuzz harnesses, where ASan rules out `ulimit -v`); nullopt where none
/// can be read.
[[nodiscard]] std::optional<std::size_t> available_host_memory();

/// "; the address-space limit (ulimit -v) is X GiB, Y GiB of it mapped already" under RLIMIT_AS,
/// else "": for out-of-memory messages, since libraries (CUDA's) map a lot of address space.
[[nodiscard]] std::string address_limit_note();

/// Throws OutOfMemory("<what> needs X GiB of memory, Y GiB available") when `bytes` exceed
/// available_host_memory() (nothing when that is unknown).
void require_host_memory(std::size_t bytes, const std::string& what);

/// "needs X of memory, Y available": GiB with two decimals, or MiB, then bytes, where two
/// decimals would show the same number for different sizes (QA: "needs 1.07 GiB of memory, 1.07
/// GiB available").
[[nodiscard]] std::string memory_shortfall(std::size_t needed, std::size_t available);

/// rows·cols·element_size without overflow; throws OutOfMemory naming the shape when it
/// overflows or, from 256 MiB on, when it exceeds the available memory (Matrix allocations).
std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, std::size_t element_size);

/// OpenBLAS threads that fit `limit_bytes` of address space (RLIMIT_AS, `ulimit -v`) on `cpus`
/// CPUs: (limit − 1.5 GiB for the program and its libraries, CUDA's included) / 192 MiB (each
/// OpenBLAS thread's 128 MiB buffer, its stack and slack), clamped to [1, cpus].
[[nodiscard]] int blas_threads_for_address_limit(std::size_t limit_bytes, int cpus);

/// Call at the start of main, before any plugin loads OpenBLAS. Under an address-space limit,
/// sets OPENBLAS_NUM_THREADS to blas_threads_for_address_limit() when that is below the CPU
/// count: an OpenBLAS thread that cannot map its buffer spins forever, and the process then
/// ignores SIGTERM (Debian 12, OpenBLAS 0.3.21; QA: `gemflow plugins` hung under `ulimit -v
/// 1200000` on 2 CPUs). Leaves the environment alone when there is no limit or when
/// OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS is set. Returns the thread count
/// it set, 0 when it set none.
int fit_blas_threads_to_address_limit();

}  // namespace gemflow
