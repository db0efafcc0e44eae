#include "common/line_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <utility>

namespace netsmith {

LineTail::LineTail(std::string path, std::size_t maxLine, std::uint64_t maxBytesPerRead)
    : m_path(std::move(path)), m_maxLine(maxLine), m_maxBytesPerRead(maxBytesPerRead) {}

std::vector<std::string> LineTail::readNew() {
  std::vector<std::string> lines;
  m_restarted = false;
  // Regular files only, checked on the file opened (not its name, which can change under
  // us): a FIFO put in a run folder must not block the poll, a device not fill memory.
  const int fd = ::open(m_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return lines;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return lines;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < m_offset) {
    m_offset = 0;
    m_partial.clear();
    m_skipping = false;
    m_restarted = true;
  }
  const std::uint64_t want = std::min(size - m_offset, m_maxBytesPerRead);
  std::string chunk(static_cast<std::size_t>(want), '\0');
  std::size_t got = 0;
  while (got < chunk.size()) {
    const auto n =
        ::pread(fd, chunk.data() + got, chunk.size() - got, static_cast<off_t>(m_offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  chunk.resize(got);
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
