#pragma once
// Reading sampled signals (gemflow/types/signal.hpp) and writing segmentations.
//
// Formats, by extension (case-insensitive):
//  .json  TCPD dataset (van den Burg & Williams 2020, github alan-turing-institute/TCPD):
//         {"name", "n_obs", "n_dim", "time": {"index": [...], ...}, "series": [{"label": name,
//         "raw": [numbers or null]}, ...]}; one channel per series entry, null = missing. n_obs
//         and n_dim, when present, must match. The time index is not a time axis (TCPD's "raw"
//         times are dates): the signal is regular, 1 sample per unit.
//  .csv   comma-separated, .tsv tab-separated, .txt whitespace- or comma-separated: one sample
//         per line, one channel per column (a one-value-per-line file is one channel); an
//         optional header row of names (a first row none of whose fields is a number); '#'
//         lines and blank lines skipped; CRLF and a UTF-8 BOM accepted. Empty fields, NA, NaN,
//         nan, null and ? are missing values. `time_column` (a header name or a 1-based column
//         number) takes that column as the time axis (finite, strictly increasing, seconds);
//         `columns` selects the channels (the other columns are not read).
//  .npy   a 2-D array (T × D; a 1-D array is one channel) of '<f8', '<f4', '<i8' or '<i4'
//         (gemflow/io/matrix_io.hpp: its rules and errors), no missing values.
// Missing values: marked 0 in Signal::valid (left empty when nothing is missing), and their
// placeholder filled per channel by linear interpolation between the nearest observed samples
// (before the first and after the last observed sample: that sample's value); reported
// (SignalFileInfo::missing, the rows). A channel with no observed value is an error. Models that
// honour the mask (semicrf.gaussian_emissions, semicrf.fit) marginalise the missing values out.
// Errors: ParseError "file:line: message" (JSON: the line of the offending value; .npy: byte
// offsets) — ragged rows, text in a numeric column, too few rows, non-increasing times, a
// channel without values, sizes that contradict n_obs/n_dim.
#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/segmentation.hpp"
#include "gemflow/types/signal.hpp"

namespace gemflow::io {

struct ReadSignalOptions {
  std::string time_column;  ///< text formats: header name or 1-based column number; empty: none
  /// Text formats: the channels, comma-separated header names or 1-based column numbers, in file
  /// order; other columns are not read (they may hold text: clone names, dates). Empty: every
  /// column but the time column.
  std::string columns;
  CancelCheck cancel;  ///< polled every 4096 lines or values (ReadCancelled)
};

struct SignalFileInfo {
  std::string format;                     ///< "tcpd-json", "csv", "tsv", "text", "npy"
  std::string name;                       ///< TCPD "name"; else empty
  bool header = false;                    ///< text formats: a header row was read
  std::size_t missing = 0;                ///< missing values filled
  std::vector<std::size_t> missing_rows;  ///< sample indices with a missing value (ascending, unique)
  std::vector<int> lines;                 ///< text and JSON formats: the file line of each sample
};

/// Reads a signal file by extension (.json, .csv, .tsv, .txt, .npy).
[[nodiscard]] Signal read_signal(const std::string& path, const ReadSignalOptions& o = {},
                                 SignalFileInfo* info = nullptr);
/// Same from bytes in memory; `path` names it in errors and its extension picks the format.
[[nodiscard]] Signal parse_signal(std::string_view bytes, const std::string& path, const ReadSignalOptions& o = {},
                                  SignalFileInfo* info = nullptr);

/// Writes the segments as CSV (header start,end,label,label_name,score[,start_time,end_time]
/// when sample_rate > 0) or JSON ({"length", "sample_rate", "labels", "segments": [{start, end,
/// label, label_name, score}]}), by the extension of `path` (.csv or .json). Numbers: shortest
/// round-trip text. std::invalid_argument for another extension or an invalid segmentation.
void write_segments(std::ostream& out, const Segmentation& s, const std::string& path);

}  // namespace gemflow::io
