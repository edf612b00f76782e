#pragma once
// Limits shared by the io readers and writers, and the cancellation hook of long reads.
#include <cstddef>
#include <functional>
#include <stdexcept>

namespace gemflow::io {

/// Largest |coordinate| (Å) a reader accepts and a writer of a readable format emits (PDB,
/// mmCIF and SD files): 10⁶ Å (0.1 mm) is far beyond any molecule, and a value past it is a
/// corrupt or mis-scaled file (1e300 would overflow bond perception and distance sums). The
/// mmCIF writer's %.3f keeps every such value exact to the file's precision; PDB's columns
/// 31-54 (%8.3f) hold only -999.999..9999.999 and its writer refuses more.
inline constexpr double kMaxAbsCoordinate = 1e6;

/// Polled by the readers every few thousand lines or entries; returns true to stop reading.
/// Readers then throw ReadCancelled. Empty: never stops.
using CancelCheck = std::function<bool()>;

/// A read stopped because its CancelCheck returned true.
class ReadCancelled : public std::runtime_error {
 public:
  ReadCancelled() : std::runtime_error("reading cancelled") {}
};

namespace detail {
/// Calls `cancel` every 4096th call (counted in `tick`); throws ReadCancelled when it says stop.
inline void poll_cancel(const CancelCheck& cancel, std::size_t& tick) {
  if (cancel && (++tick & 4095u) == 0 && cancel()) throw ReadCancelled();
}
}  // namespace detail

}  // namespace gemflow::io
