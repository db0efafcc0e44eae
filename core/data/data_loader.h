#pragma once

// The threaded batch loader (LibTorch tensors). Include only where batches are consumed.
#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "augment/pipeline.h"
#include "data/data_module.h"
#include "data/sample_processor.h"
#include "target/box.h"

namespace netsmith::data {

/// Makes the target of a batch from its samples: the run's task (task/task.h). Called from the
/// loader's worker threads, so it must be safe to call concurrently.
class TargetCollator {
 public:
  virtual ~TargetCollator() = default;
  /// `samples`: positions in `set`, in batch order.
  virtual torch::Tensor collate(const SampleSet& set,
                                const std::vector<std::int64_t>& samples) const = 0;
  /// Whether the target lies on the pixels (a class mask per sample): the loader then runs
  /// each sample's mask through the augmentation with its image and makes the batch's target
  /// with collateMasks() instead of collate().
  virtual bool pixelTargets() const { return false; }
  /// The target from the batch's masks (N x H x W bytes, 255: ignore).
  virtual torch::Tensor collateMasks(const torch::Tensor& masks) const { return masks; }
  /// Whether the target is object boxes: the loader then moves each sample's boxes with its
  /// image through the augmentation and makes the batch's target with collateBoxes().
  virtual bool boxTargets() const { return false; }
  /// The target from the batch's boxes (each sample's, in the model input's pixels).
  virtual torch::Tensor collateBoxes(const std::vector<std::vector<target::Box>>& boxes) const;
};

/// The target rows (DatasetSource::targetRow) of `samples` (positions in `set`) as an N x width
/// float tensor: multi-label and regression batches. Throws netsmith::Error naming the split
/// and `what` ("label sets for 10 classes (a multilabel_csv source gives them)") when the
/// source has no rows of that width.
torch::Tensor targetRows(const SampleSet& set, const std::vector<std::int64_t>& samples,
                         std::int64_t width, const std::string& what);

struct LoaderOptions {
  std::int64_t batchSize = 64;
  bool training = true;   ///< random augmentation and batch mixes; else deterministic steps only
  bool shuffle = true;    ///< a new seeded order every epoch
  bool dropLast = false;  ///< drop a last, smaller batch
  /// With `shuffle`: each epoch draws size() samples with replacement, sample i with a weight of
  /// 1 / (samples of its class), so every class is equally likely (a sample of a label outside
  /// 0..numClasses-1 is never drawn). Seeded per epoch like the shuffle.
  bool balanced = false;
  int workers = 0;  ///< 0: defaultWorkers()
  int prefetchBatches = 4;
  std::uint64_t seed = 0;
  bool channelsLast = false;
  bool pinMemory = false;  ///< page-locked batches for fast CUDA copies (ignored without CUDA)
  ErrorPolicy onError = ErrorPolicy::Skip;
  std::int64_t numClasses = 0;           ///< for soft targets
  std::vector<augment::BatchMix> mixes;  ///< MixUp / CutMix (training only)
  /// Data parallelism: batch b of the epoch's shuffled order spans batchSize x worldSize
  /// samples (the global batch), and this process takes its `rank`-th share of it. Shares are
  /// contiguous, disjoint and as even as possible (the last global batch may leave a process
  /// fewer samples, or none); together the processes see every sample exactly once per epoch.
  int rank = 0;
  int worldSize = 1;
  /// The batch's target (Batch::target); none: the samples' class labels.
  std::shared_ptr<const TargetCollator> collator;
};

struct Batch {
  torch::Tensor images;   ///< N x C x H x W float (channels-last memory when asked)
  torch::Tensor labels;   ///< N int64: the samples' classes as their source gives them
  torch::Tensor target;   ///< what the task trains towards (LoaderOptions::collator)
  torch::Tensor targets;  ///< N x K float soft labels when batch mixes are configured
  torch::Tensor
      masks;  ///< N x H x W uint8 class masks (255: ignore) when the target lies on pixels
  /// Each sample's boxes in the model input's pixels, when the target is boxes.
  std::vector<std::vector<target::Box>> boxes;
  std::vector<std::int64_t> samples;  ///< positions in the sample set
  std::int64_t index = 0;             ///< batch number in the epoch
  double mixWeight = 1.0;
  std::int64_t globalCount = 0;  ///< samples of the global batch before skips (all ranks)
};

/// Feeds batches of a SampleSet from worker threads through a bounded prefetch queue. Batches
/// come out in order and are identical whatever the number of workers: sample k of epoch e
/// is augmented with an RNG seeded from (seed, e, k), batch b's mix from (seed, e, b).
///   DataLoader loader(data.train, processor, options);
///   loader.startEpoch(0);
///   while (auto batch = loader.next()) train(*batch);
class DataLoader {
 public:
  DataLoader(SampleSet set, const SampleProcessor& processor, LoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Begins an epoch (stopping any epoch still running) at batch `firstBatch` (a resumed
  /// epoch continues with the batches it has not seen; the order is the same).
  void startEpoch(std::int64_t epoch, std::int64_t firstBatch = 0);
  /// The next batch, or nullopt at the end of the epoch or after stop(). Under
  /// ErrorPolicy::Fail, throws netsmith::Error naming the bad sample.
  std::optional<Batch> next();
  /// Cancels the epoch and joins every worker (promptly: workers check between samples).
  void stop();

  std::int64_t batchesPerEpoch() const;
  int workers() const { return m_workers; }
  /// Samples skipped so far (unreadable under ErrorPolicy::Skip).
  std::int64_t skippedCount() const { return m_skippedCount.load(); }
  /// Skip warnings collected since the last call.
  std::vector<SkippedItem> takeWarnings();

  /// Worker threads to use beside `trainingThreads` compute threads on this machine.
  static int defaultWorkers(int trainingThreads);

 private:
  void workerLoop();
  Batch buildBatch(std::int64_t b);
  /// The balanced sampler's epoch order (LoaderOptions::balanced) from `rng`.
  void drawBalanced(std::mt19937_64& rng);

  SampleSet m_set;
  const SampleProcessor& m_processor;
  LoaderOptions m_options;
  int m_workers = 1;

  std::vector<std::int64_t> m_order;
  /// The balanced sampler's running sum of the samples' weights (empty: shuffle).
  std::vector<double> m_drawWeights;
  std::int64_t m_epoch = 0;
  std::int64_t m_numBatches = 0;
  std::atomic<std::int64_t> m_nextToBuild{0};
  std::int64_t m_nextToHand = 0;
  std::atomic<bool> m_stopping{false};
  std::atomic<std::int64_t> m_skippedCount{0};

  std::mutex m_mutex;
  std::condition_variable m_readyCv;   // consumer waits for batches
  std::condition_variable m_windowCv;  // workers wait for prefetch room
  std::map<std::int64_t, Batch> m_ready;
  std::string m_error;  // first fatal sample error (ErrorPolicy::Fail)
  std::vector<SkippedItem> m_warnings;
  std::vector<std::thread> m_threads;
};

}  // namespace netsmith::data
