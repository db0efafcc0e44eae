#include "data/data_module.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace netsmith::data {

SplitIndices splitTrainValidation(std::int64_t n,
                                  const std::function<std::int64_t(std::int64_t)>& label,
                                  std::int64_t numClasses, double fraction, std::uint64_t seed,
                                  bool stratified) {
  SplitIndices out;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::int64_t>> groups(
      stratified ? static_cast<std::size_t>(std::max<std::int64_t>(1, numClasses)) : 1);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t g = stratified ? static_cast<std::size_t>(label(i)) : 0;
    groups.at(g).push_back(i);
  }
  for (auto& group : groups) {
    std::shuffle(group.begin(), group.end(), rng);
    const auto take =
        static_cast<std::size_t>(std::llround(fraction * static_cast<double>(group.size())));
    out.validation.insert(out.validation.end(), group.begin(),
                          group.begin() + static_cast<long>(take));
    out.train.insert(out.train.end(), group.begin() + static_cast<long>(take), group.end());
  }
  std::sort(out.train.begin(), out.train.end());
  std::sort(out.validation.begin(), out.validation.end());
  return out;
}

std::vector<SkippedItem> DataModule::skippedAtScan() const {
  std::vector<SkippedItem> out;
  std::vector<const DatasetSource*> seen;
  for (const SampleSet* s : {&train, &validation, &test}) {
    if (!s->source || std::find(seen.begin(), seen.end(), s->source.get()) != seen.end()) continue;
    seen.push_back(s->source.get());
    out.insert(out.end(), s->source->skippedAtScan().begin(), s->source->skippedAtScan().end());
  }
  return out;
}

namespace {

SampleSet wholeSource(std::string name, std::shared_ptr<const DatasetSource> source) {
  SampleSet s;
  s.name = std::move(name);
  s.indices.resize(static_cast<std::size_t>(source->size()));
  for (std::size_t i = 0; i < s.indices.size(); ++i)
    s.indices[i] = static_cast<std::int64_t>(i);
  s.source = std::move(source);
  return s;
}

void checkSameClasses(const DatasetSource& other, const std::string& path, const DataModule& m) {
  if (other.numClasses() != m.numClasses()) {
    throw Error(path + ": has " + std::to_string(other.numClasses()) +
                " classes but data.train has " + std::to_string(m.numClasses()) +
                "; every split needs the same classes");
  }
}

}  // namespace

DataModule openDataModule(const DataConfig& config) {
  DataModule m;
  m.config = config;
  std::shared_ptr<const DatasetSource> train =
      openSource(config.train, config.classes, config.onError);
  if (train->size() == 0) throw Error(config.train.path + ": no usable samples");
  m.classes = train->classNames();
  if (config.validation) {
    m.train = wholeSource("train", train);
    auto val = openSource(*config.validation, m.classes, config.onError);
    checkSameClasses(*val, config.validation->path, m);
    m.validation = wholeSource("validation", val);
  } else {
    const auto split = splitTrainValidation(
        train->size(), [&](std::int64_t i) { return train->label(i); }, train->numClasses(),
        config.split.fraction, config.split.seed, config.split.stratified);
    m.train = SampleSet{"train", train, split.train};
    m.validation = SampleSet{"validation", train, split.validation};
    if (config.split.limit > 0 && m.validation.size() > config.split.limit) {
      m.validation.indices.resize(static_cast<std::size_t>(config.split.limit));
    }
  }
  if (m.train.empty())
    throw Error("data.validation: the split leaves no training samples; lower the fraction");
  if (config.test) {
    auto test = openSource(*config.test, m.classes, config.onError);
    checkSameClasses(*test, config.test->path, m);
    m.test = wholeSource("test", test);
  } else {
    m.test.name = "test";
  }
  if (!m.validation.source) m.validation.name = "validation";
  return m;
}

std::vector<std::int64_t> classCounts(const SampleSet& set, std::int64_t numClasses) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(std::max<std::int64_t>(0, numClasses)),
                                   0);
  for (std::int64_t k = 0; k < set.size(); ++k) {
    const auto label = set.label(k);
    if (label >= 0 && label < numClasses) ++counts[static_cast<std::size_t>(label)];
  }
  return counts;
}

}  // namespace netsmith::data
