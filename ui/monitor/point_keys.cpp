#include "monitor/point_keys.h"

#include <algorithm>

#include "run/events.h"

namespace netsmith::ui {

PointKeys::Keys PointKeys::addBatch(const run::BatchMetrics& b) {
  const Keys keys = {
      double(b.step),
      double(b.epoch) + double(b.batch + 1) / double(std::max<std::int64_t>(1, b.batchesPerEpoch)),
      b.seconds + m_timeOffset};
  for (int m = 0; m < kModes; ++m)
    m_batches[std::size_t(m)].push_back(keys[std::size_t(m)]);
  m_ids.emplace_back(b.epoch, b.batch);
  m_lastSeconds = keys[2];
  m_lastStep = b.step;
  return keys;
}

PointKeys::Keys PointKeys::addEpoch(std::int64_t epoch) {
  const Keys keys = {double(m_lastStep), double(epoch + 1), m_lastSeconds};
  for (int m = 0; m < kModes; ++m)
    m_epochs[std::size_t(m)].push_back(keys[std::size_t(m)]);
  return keys;
}

long PointKeys::findBatch(std::int64_t epoch, std::int64_t batch) const {
  for (long i = long(m_ids.size()) - 1; i >= 0; --i)
    if (m_ids[std::size_t(i)] == std::make_pair(epoch, batch)) return i;
  return -1;
}

void PointKeys::clear() {
  for (auto& keys : m_batches)
    keys.clear();
  for (auto& keys : m_epochs)
    keys.clear();
  m_ids.clear();
  m_lastSeconds = 0;
  m_lastStep = 0;
  m_timeOffset = 0;
}

}  // namespace netsmith::ui
