#include "common/line_tail.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <utility>

namespace netsmith {

LineTail::LineTail(std::string path, std::size_t maxLine, std::uint64_t maxBytesPerRead)
    : m_path(std::move(path)), m_maxLine(maxLine), m_maxBytesPerRead(maxBytesPerRead) {}

std::vector<std::string> LineTail::readNew() {
  std::vector<std::string> lines;
  m_restarted = false;
  struct stat st {};
  // Regular files only: a FIFO put in a run folder must not block the poll.
  if (::stat(m_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return lines;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < m_offset) {
    m_offset = 0;
    m_partial.clear();
    m_skipping = false;
    m_restarted = true;
  }
  if (size == m_offset) return lines;
  std::ifstream in(m_path, std::ios::binary);
  if (!in) return lines;
  in.seekg(static_cast<std::streamoff>(m_offset));
  const std::uint64_t want = std::min(size - m_offset, m_maxBytesPerRead);
  std::string chunk(static_cast<std::size_t>(want), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(want));
  chunk.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  m_offset += chunk.size();
  std::size_t start = 0;
  while (start < chunk.size()) {
    const std::size_t end = chunk.find('\n', start);
    const std::size_t stop = end == std::string::npos ? chunk.size() : end;
    if (!m_skipping) {
      if (m_partial.size() + (stop - start) > m_maxLine) {
        m_skipping = true;
        m_partial.clear();
      } else {
        m_partial.append(chunk, start, stop - start);
      }
    }
    if (end == std::string::npos) break;
    if (!m_skipping) lines.push_back(std::move(m_partial));
    m_partial.clear();
    m_skipping = false;
    start = end + 1;
  }
  return lines;
}

}  // namespace netsmith
