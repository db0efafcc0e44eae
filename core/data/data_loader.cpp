#include "data/data_loader.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "augment/batch_mix.h"
#include "augment/sample_rng.h"

namespace netsmith::data {

torch::Tensor targetRows(const SampleSet& set, const std::vector<std::int64_t>& samples,
                         std::int64_t width, const std::string& what) {
  const auto& source = *set.source;
  if (source.targetWidth() != width) throw Error(set.name + ": the data has no " + what);
  auto t = torch::empty({std::int64_t(samples.size()), width}, torch::kFloat);
  float* out = t.data_ptr<float>();
  for (std::size_t i = 0; i < samples.size(); ++i)
    source.targetRow(set.indices[std::size_t(samples[i])], out + std::int64_t(i) * width);
  return t;
}

namespace {
constexpr std::uint64_t kOrderStream = 0x5EEDull << 40;
constexpr std::uint64_t kMixStream = 0xB17Cull << 40;

/// This process's share of a global batch: where it starts in the epoch's order, its size, and
/// the global batch's size before skips.
struct LoaderRankShare {
  std::int64_t start = 0;
  std::int64_t count = 0;
  std::int64_t globalCount = 0;
};

/// The contiguous share of global batch `b` that `options.rank` takes from `setSize` samples.
LoaderRankShare loaderRankShare(const LoaderOptions& options, std::int64_t setSize,
                                std::int64_t b) {
  const std::int64_t world = std::max(1, options.worldSize);
  const std::int64_t globalStart = b * options.batchSize * world;
  const std::int64_t globalCount = std::min(options.batchSize * world, setSize - globalStart);
  const std::int64_t base = globalCount / world, extra = globalCount % world;
  const std::int64_t rank = options.rank;
  LoaderRankShare share;
  share.start = globalStart + rank * base + std::min(rank, extra);
  share.count = base + (rank < extra ? 1 : 0);
  share.globalCount = globalCount;
  return share;
}

/// The first `kept` rows of a tensor made for `count` samples (a copy when some were skipped).
torch::Tensor loaderKeptRows(const torch::Tensor& t, std::size_t kept, std::int64_t count) {
  return kept == static_cast<std::size_t>(count) ? t : t.narrow(0, 0, std::int64_t(kept)).clone();
}

/// The random source of batch `b`'s mixes in `epoch`, seeded from (seed, epoch, b).
augment::SampleRng loaderMixRng(const LoaderOptions& options, std::int64_t epoch, std::int64_t b) {
  return augment::SampleRng(augment::mixSeed(
      options.seed ^ kMixStream, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(b)));
}

/// Runs the training batch mixes on batch `b` and makes its target from its masks, boxes or
/// samples (the boxes are moved into the batch).
void mixAndCollateLoaderBatch(Batch& batch, std::vector<std::vector<target::Box>>& boxes,
                              bool pixelTargets, bool boxTargets, const SampleSet& set,
                              const LoaderOptions& options, std::int64_t epoch, std::int64_t b) {
  if (pixelTargets) {
    if (options.training && !options.mixes.empty() && !batch.samples.empty()) {
      // CutMix pastes the partner's mask with its box (MixUp is refused for masks).
      augment::SampleRng rng = loaderMixRng(options, epoch, b);
      torch::Tensor none;
      batch.mixWeight =
          augment::applyBatchMix(batch.images, none, options.mixes, rng, &batch.masks);
    }
    batch.target = options.collator->collateMasks(batch.masks);
  } else if (boxTargets) {
    // Of the batch mixes only Mosaic moves boxes (run_setup refuses the others for them).
    if (options.training && !boxes.empty())
      for (const auto& mix : options.mixes)
        if (mix.kind == augment::BatchMix::Kind::Mosaic) {
          augment::SampleRng rng = loaderMixRng(options, epoch, b);
          augment::applyMosaic(batch.images, boxes, mix.probability, rng);
        }
    batch.target = options.collator->collateBoxes(boxes);
    batch.boxes = std::move(boxes);
  } else {
    batch.target = options.collator ? options.collator->collate(set, batch.samples) : batch.labels;
  }
  if (!pixelTargets && !boxTargets && options.training && !options.mixes.empty() &&
      options.numClasses > 0 && !batch.samples.empty()) {
    batch.targets = augment::oneHot(batch.labels, options.numClasses);
    augment::SampleRng rng = loaderMixRng(options, epoch, b);
    batch.mixWeight = augment::applyBatchMix(batch.images, batch.targets, options.mixes, rng);
  }
}

}  // namespace

int DataLoader::defaultWorkers(int trainingThreads) {
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(hw - std::max(0, trainingThreads), 1, 8);
}

DataLoader::DataLoader(SampleSet set, const SampleProcessor& processor, LoaderOptions options)
    : m_set(std::move(set)), m_processor(processor), m_options(std::move(options)) {
  if (m_options.batchSize < 1) throw Error("batch size must be >= 1");
  m_workers = m_options.workers > 0 ? m_options.workers : defaultWorkers(1);
  m_options.prefetchBatches = std::max(1, m_options.prefetchBatches);
  if (m_options.balanced && m_options.shuffle && !m_set.empty()) {
    std::int64_t classes = m_options.numClasses;
    if (classes <= 0) classes = m_set.source->numClasses();
    const auto counts = classCounts(m_set, classes);
    m_drawWeights.resize(std::size_t(m_set.size()));
    double total = 0;
    for (std::int64_t k = 0; k < m_set.size(); ++k) {
      const std::int64_t c = m_set.label(k);
      if (c >= 0 && c < classes && counts[std::size_t(c)] > 0)
        total += 1.0 / double(counts[std::size_t(c)]);
      m_drawWeights[std::size_t(k)] = total;
    }
    if (total <= 0) m_drawWeights.clear();  // no sample has a class: a plain shuffle
  }
}

void DataLoader::drawBalanced(std::mt19937_64& rng) {
  // Inverse transform on the running sums, with the generator's own bits (the same order on
  // every standard library, so every process of a data-parallel run draws the same epoch).
  const double total = m_drawWeights.back();
  for (auto& k : m_order) {
    const double u = double(rng() >> 11) * 0x1.0p-53 * total;
    const auto it = std::upper_bound(m_drawWeights.begin(), m_drawWeights.end(), u);
    k = std::min<std::int64_t>(std::int64_t(it - m_drawWeights.begin()), m_set.size() - 1);
  }
}

DataLoader::~DataLoader() {
  stop();
}

std::int64_t DataLoader::batchesPerEpoch() const {
  const std::int64_t n = m_set.size(), b = m_options.batchSize * std::max(1, m_options.worldSize);
  return m_options.dropLast ? n / b : (n + b - 1) / b;
}

void DataLoader::stop() {
  m_stopping = true;
  m_windowCv.notify_all();
  m_readyCv.notify_all();
  for (auto& t : m_threads) {
    if (t.joinable()) t.join();
  }
  m_threads.clear();
}

void DataLoader::startEpoch(std::int64_t epoch, std::int64_t firstBatch) {
  stop();
  m_stopping = false;
  m_epoch = epoch;
  m_order.resize(static_cast<std::size_t>(m_set.size()));
  std::iota(m_order.begin(), m_order.end(), 0);
  if (m_options.shuffle) {
    std::mt19937_64 rng(
        augment::mixSeed(m_options.seed ^ kOrderStream, static_cast<std::uint64_t>(epoch), 0));
    if (!m_options.balanced || m_drawWeights.empty())
      std::shuffle(m_order.begin(), m_order.end(), rng);
    else
      drawBalanced(rng);
  }
  m_numBatches = batchesPerEpoch();
  firstBatch = std::clamp<std::int64_t>(firstBatch, 0, m_numBatches);
  m_nextToBuild = firstBatch;
  m_nextToHand = firstBatch;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_ready.clear();
    m_error.clear();
  }
  for (int i = 0; i < m_workers; ++i)
    m_threads.emplace_back([this] { workerLoop(); });
}

void DataLoader::workerLoop() {
  for (;;) {
    const std::int64_t b = m_nextToBuild.fetch_add(1);
    if (b >= m_numBatches) return;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_windowCv.wait(lock,
                      [&] { return m_stopping || b < m_nextToHand + m_options.prefetchBatches; });
      if (m_stopping) return;
    }
    try {
      Batch batch = buildBatch(b);
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_stopping) return;
      m_ready.emplace(b, std::move(batch));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_error.empty() && !m_stopping) m_error = e.what();
    }
    m_readyCv.notify_all();
  }
}

torch::Tensor TargetCollator::collateBoxes(const std::vector<std::vector<target::Box>>&) const {
  throw Error("this task takes no boxes");
}

Batch DataLoader::buildBatch(std::int64_t b) {
  const LoaderRankShare share = loaderRankShare(m_options, m_set.size(), b);
  const std::int64_t start = share.start;
  const std::int64_t count = share.count;
  const auto& f = m_processor.format();
  const std::int64_t floats = m_processor.sampleFloats();
  auto images = torch::empty({count, f.channels, f.height, f.width}, torch::kFloat);
  float* data = images.data_ptr<float>();
  const bool pixelTargets = m_options.collator && m_options.collator->pixelTargets();
  const bool boxTargets = m_options.collator && m_options.collator->boxTargets();
  std::vector<std::vector<target::Box>> boxes;
  torch::Tensor masks;
  if (pixelTargets) masks = torch::empty({count, f.height, f.width}, torch::kUInt8);
  const std::int64_t maskBytes = std::int64_t(f.height) * f.width;
  std::vector<std::int64_t> labels, samples, kept;
  for (std::int64_t i = 0; i < count; ++i) {
    if (m_stopping) throw Error("stopped");
    const std::int64_t k = m_order[static_cast<std::size_t>(start + i)];
    try {
      m_processor.process(
          m_set, k, m_options.training, m_options.seed, m_epoch,
          data + floats * std::int64_t(kept.size()),
          pixelTargets ? masks.data_ptr<std::uint8_t>() + maskBytes * std::int64_t(kept.size())
                       : nullptr,
          boxTargets ? &boxes.emplace_back() : nullptr);
    } catch (const SampleError& e) {
      if (boxTargets && boxes.size() > kept.size()) boxes.pop_back();
      if (m_options.onError == ErrorPolicy::Fail) {
        throw Error(std::string(e.what()) +
                    " (data.on_error is \"fail\"; set it to \"skip\" to leave such samples out)");
      }
      ++m_skippedCount;
      std::lock_guard<std::mutex> lock(m_mutex);
      m_warnings.push_back(skippedFor(m_set.describe(k), e.what()));
      continue;
    }
    kept.push_back(i);
    labels.push_back(m_set.label(k));
    samples.push_back(k);
  }
  Batch batch;
  batch.index = b;
  batch.globalCount = share.globalCount;
  batch.images = loaderKeptRows(images, kept.size(), count);
  batch.labels = torch::tensor(labels, torch::kLong);
  batch.samples = std::move(samples);
  if (pixelTargets) batch.masks = loaderKeptRows(masks, kept.size(), count);
  mixAndCollateLoaderBatch(batch, boxes, pixelTargets, boxTargets, m_set, m_options, m_epoch, b);
  if (m_options.channelsLast)
    batch.images = batch.images.contiguous(torch::MemoryFormat::ChannelsLast);
  if (m_options.pinMemory && torch::cuda::is_available()) batch.images = batch.images.pin_memory();
  return batch;
}

std::optional<Batch> DataLoader::next() {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    if (!m_error.empty()) {
      const std::string error = m_error;
      lock.unlock();
      stop();
      throw Error(error);
    }
    if (m_stopping || m_nextToHand >= m_numBatches) return std::nullopt;
    auto it = m_ready.find(m_nextToHand);
    if (it != m_ready.end()) {
      Batch batch = std::move(it->second);
      m_ready.erase(it);
      ++m_nextToHand;
      lock.unlock();
      m_windowCv.notify_all();
      return batch;
    }
    m_readyCv.wait(lock);
  }
}

std::vector<SkippedItem> DataLoader::takeWarnings() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<SkippedItem> out;
  out.swap(m_warnings);
  return out;
}

}  // namespace netsmith::data
