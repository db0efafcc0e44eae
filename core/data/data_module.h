#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/data_config.h"
#include "data/dataset_source.h"

namespace netsmith::data {

/// A split: samples of a source chosen by index.
struct SampleSet {
  std::string name;  ///< "train", "validation", "test"
  std::shared_ptr<const DatasetSource> source;
  std::vector<std::int64_t> indices;  ///< into `source`

  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
  bool empty() const { return indices.empty(); }
  std::int64_t label(std::int64_t k) const {
    return source->label(indices[static_cast<std::size_t>(k)]);
  }
  std::string describe(std::int64_t k) const {
    return source->describe(indices[static_cast<std::size_t>(k)]);
  }
  /// Sample k's target as a person reads it: its class name, its labels ("Bag, Sandal"; "no
  /// label") or its targets ("sin 0.42, cos 0.91").
  std::string describeTarget(std::int64_t k) const;
};

/// Train / validation split of `n` samples with labels `label(i)`. Stratified: each class gives
/// round(fraction * its count) samples to validation; the choice is seeded. Both lists come back
/// sorted (shuffling is the loader's job, per epoch).
struct SplitIndices {
  std::vector<std::int64_t> train;
  std::vector<std::int64_t> validation;
};
SplitIndices splitTrainValidation(std::int64_t n,
                                  const std::function<std::int64_t(std::int64_t)>& label,
                                  std::int64_t numClasses, double fraction, std::uint64_t seed,
                                  bool stratified);

/// The data of a project, opened: sources read, splits made.
struct DataModule {
  DataConfig config;
  SampleSet train;
  SampleSet validation;  ///< may be empty
  SampleSet test;        ///< may be empty
  std::vector<std::string> classes;
  std::vector<std::string> targets;  ///< a regression source's target names
  /// The subsets that `limit`s took, for data-stats: "data.train.limit: 500 of 60000 samples, a
  /// stratified random subset (seed 0)".
  std::vector<std::string> subsets;

  std::int64_t numClasses() const { return static_cast<std::int64_t>(classes.size()); }
  /// Items every source left out while scanning.
  std::vector<SkippedItem> skippedAtScan() const;
};

/// Opens every source of `config` and makes the splits. Throws netsmith::Error naming the place.
DataModule openDataModule(const DataConfig& config);

/// A seeded random subset of `limit` of `indices` (all of them when limit <= 0 or there are no
/// more), stratified: each class keeps its share (quotas by largest remainder), so no class is
/// dropped by a limit. Returned sorted.
std::vector<std::int64_t> stratifiedSubset(const std::vector<std::int64_t>& indices,
                                           const std::function<std::int64_t(std::int64_t)>& label,
                                           std::int64_t numClasses, std::int64_t limit,
                                           std::uint64_t seed);

/// Samples per class.
std::vector<std::int64_t> classCounts(const SampleSet& set, std::int64_t numClasses);

}  // namespace netsmith::data
