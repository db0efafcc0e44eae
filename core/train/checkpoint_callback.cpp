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

std::string CheckpointCallback::onEpochEnd(const run::EpochMetrics& epoch) {
  if (m_options.directory.empty()) return {};
  run::TrainingEvent event;
  event.type = run::EventType::EpochEnd;
  event.epoch = epoch;
  const Json metrics = event.toJson();
  m_write("last", metrics);
  if (m_best && m_best->improved()) m_write("best", metrics);
  const std::int64_t finished = epoch.epoch + 1;
  if (m_options.every > 0 && finished % m_options.every == 0) {
    m_write("epoch-" + std::to_string(finished), metrics);
    pruneEpochCheckpoints(finished);
  }
  return {};
}

void CheckpointCallback::pruneEpochCheckpoints(std::int64_t finished) const {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  // At most 18 digits: a planted "epoch-99999999999999999999" is not a number of this run.
  const std::regex pattern("epoch-([0-9]{1,18})\\.safetensors");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(m_options.directory, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    // Only the epochs this run has reached are its own: a file from elsewhere numbered beyond
    // them is left alone, and does not push this run's own files out.
    const std::int64_t epoch = std::stoll(m[1]);
    if (epoch <= finished) found.emplace_back(epoch, entry.path());
  }
  std::sort(found.begin(), found.end());
  const auto keep = static_cast<std::size_t>(std::max<std::int64_t>(0, m_options.keep));
  for (std::size_t i = 0; i + keep < found.size(); ++i)
    fs::remove(found[i].second, ec);
}

}  // namespace netsmith::train
