#pragma once
// Writing files so that a failure never leaves a damaged file behind: the content goes to a
// temporary file in the target's folder, which is flushed, synced to disk and renamed over the
// target only when every step succeeded. Errors name the target and the system's reason ("No
// space left on device", "Permission denied"); the temporary file is removed and an existing
// target is left as it was. Used by NodeContext::write_file, save_workflow and the provenance
// record; nodes and plugins use it through NodeContext::write_file.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace gemflow {

/// Writes `file` atomically: `write` fills the stream; throws Error("cannot write FILE: reason").
void write_file_atomically(const std::filesystem::path& file, const std::function<void(std::ostream& out)>& write);
/// Writes `text` to `file` atomically, as above.
void write_file_atomically(const std::filesystem::path& file, std::string_view text);

/// Fills the existing or new file `tmp` through a stream, then flushes and syncs it to disk;
/// throws Error("cannot write SHOWN: reason") naming `shown` (the file the user knows) when
/// any write, the sync or the close fails. Does not rename or remove anything.
void write_stream_to(const std::filesystem::path& tmp, const std::function<void(std::ostream& out)>& write,
                     const std::filesystem::path& shown);
/// Syncs a file written by other means (e.g. a library writing to a path) to disk; throws
/// Error("cannot write SHOWN: reason") when that fails (a delayed write error: EIO, ENOSPC).
void sync_written_file(const std::filesystem::path& file, const std::filesystem::path& shown);

}  // namespace gemflow
