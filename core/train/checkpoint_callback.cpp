#include "train/checkpoint_callback.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <utility>
#include <vector>

#include "train/best_metric.h"

namespace netsmith::train {

namespace fs = std::filesystem;

CheckpointCallback::CheckpointCallback(Options options, Writer write,
                                       std::shared_ptr<const BestMetric> best)
    : m_options(std::move(options)), m_write(std::move(write)), m_best(std::move(best)) {}

std::string CheckpointCallback::onEpochEnd(const EpochMetrics& epoch) {
  if (m_options.directory.empty()) return {};
  TrainingEvent event;
  event.type = EventType::EpochEnd;
  event.epoch = epoch;
  const Json metrics = event.toJson();
  m_write("last", metrics);
  if (m_best && m_best->improved()) m_write("best", metrics);
  const std::int64_t finished = epoch.epoch + 1;
  if (m_options.every > 0 && finished % m_options.every == 0) {
    m_write("epoch-" + std::to_string(finished), metrics);
    pruneEpochCheckpoints();
  }
  return {};
}

void CheckpointCallback::pruneEpochCheckpoints() const {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  const std::regex pattern("epoch-([0-9]+)\\.safetensors");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(m_options.directory, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoll(m[1]), entry.path());
  }
  std::sort(found.begin(), found.end());
  const auto keep = static_cast<std::size_t>(std::max<std::int64_t>(0, m_options.keep));
  for (std::size_t i = 0; i + keep < found.size(); ++i)
    fs::remove(found[i].second, ec);
}

}  // namespace netsmith::train
