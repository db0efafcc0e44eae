#pragma once

// Following a file that another process appends lines to (a run's events.jsonl): each read
// returns only the whole lines written since the last one, from where it stopped, so polling a
// long run costs what it wrote since, not its whole history. No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

namespace netsmith {

class LineTail {
 public:
  /// Lines longer than `maxLine` bytes are skipped whole (never returned, never buffered beyond
  /// that size); at most `maxBytesPerRead` bytes are read per call, so one call is bounded.
  explicit LineTail(std::string path, std::size_t maxLine = std::size_t(1) << 20,
                    std::uint64_t maxBytesPerRead = std::uint64_t(64) << 20);

  /// The whole lines appended since the last call (without their '\n'). A line still being
  /// written stays for the next call. A file that is missing returns nothing; a file that got
  /// shorter (replaced or truncated) is read again from its start and `restarted()` says so.
  std::vector<std::string> readNew();

  /// At most this many bytes per later readNew() call.
  void setMaxBytesPerRead(std::uint64_t bytes) { m_maxBytesPerRead = bytes; }

  /// True when the last readNew() started the file over.
  bool restarted() const { return m_restarted; }
  std::uint64_t offset() const { return m_offset; }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::size_t m_maxLine;
  std::uint64_t m_maxBytesPerRead;
  std::uint64_t m_offset = 0;  ///< bytes consumed, partial line included
  std::string m_partial;       ///< the start of a line not yet ended
  bool m_skipping = false;     ///< inside an over-long line, dropping bytes until its end
  bool m_restarted = false;
};

}  // namespace netsmith
