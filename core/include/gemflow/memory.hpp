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
/// capped by the cgroup v2 limit of this process (memory.max − memory.current) when there is
/// one; nullopt where neither can be read.
[[nodiscard]] std::optional<std::size_t> available_host_memory();

/// Throws OutOfMemory("<what> needs X GiB of memory, Y GiB available") when `bytes` exceed
/// available_host_memory() (nothing when that is unknown).
void require_host_memory(std::size_t bytes, const std::string& what);

/// rows·cols·element_size without overflow; throws OutOfMemory naming the shape when it
/// overflows or, from 256 MiB on, when it exceeds the available memory (Matrix allocations).
std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, std::size_t element_size);

}  // namespace gemflow
