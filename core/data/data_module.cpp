#include "data/data_module.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <unordered_set>

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

std::vector<std::int64_t> stratifiedSubset(const std::vector<std::int64_t>& indices,
                                           const std::function<std::int64_t(std::int64_t)>& label,
                                           std::int64_t numClasses, std::int64_t limit,
                                           std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(indices.size());
  if (limit <= 0 || limit >= n) return indices;
  // Group by class (anything out of range in one extra group).
  const auto k = static_cast<std::size_t>(std::max<std::int64_t>(0, numClasses));
  std::vector<std::vector<std::int64_t>> groups(k + 1);
  for (auto i : indices) {
    const auto c = label(i);
    groups[c >= 0 && c < numClasses ? static_cast<std::size_t>(c) : k].push_back(i);
  }
  // Quotas: each group's share of `limit`, the remainder to the largest fractions.
  std::vector<std::int64_t> quota(groups.size());
  std::vector<std::pair<double, std::size_t>> fractions;
  std::int64_t given = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double exact = double(limit) * double(groups[g].size()) / double(n);
    quota[g] = static_cast<std::int64_t>(std::floor(exact));
    given += quota[g];
    fractions.emplace_back(exact - double(quota[g]), g);
  }
  std::stable_sort(fractions.begin(), fractions.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t r = 0; given < limit && r < fractions.size(); ++r, ++given)
    ++quota[fractions[r].second];
  std::mt19937_64 rng(seed ^ 0x5B5E5B5Eull);
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(limit));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::shuffle(groups[g].begin(), groups[g].end(), rng);
    out.insert(out.end(), groups[g].begin(), groups[g].begin() + quota[g]);
  }
  std::sort(out.begin(), out.end());
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

/// Every sample of `source`, or the stratified subset its `limit` asks for (noted in
/// `subsets`).
/// data.exclude's entries, and which of them named a sample.
struct Exclusion {
  std::unordered_set<std::string> entries;
  std::unordered_set<std::string> found;
};

SampleSet wholeSource(std::string name, std::shared_ptr<const DatasetSource> source,
                      const SourceSpec& spec, std::uint64_t seed, std::vector<std::string>& subsets,
                      Exclusion& exclusion) {
  SampleSet s;
  s.name = std::move(name);
  s.indices.reserve(static_cast<std::size_t>(source->size()));
  std::int64_t excluded = 0;
  for (std::int64_t i = 0; i < source->size(); ++i) {
    if (!exclusion.entries.empty()) {
      std::string item = source->describe(i);
      if (exclusion.entries.count(item)) {
        exclusion.found.insert(std::move(item));
        ++excluded;
        continue;
      }
    }
    s.indices.push_back(i);
  }
  if (excluded > 0)
    subsets.push_back("data.exclude: " + std::to_string(excluded) + " of the " +
                      std::to_string(source->size()) + " samples of " + spec.path + " left out");
  if (s.indices.empty()) throw Error("data.exclude: leaves " + spec.path + " without samples");
  if (spec.limit > 0 && spec.limit < source->size()) {
    s.indices = stratifiedSubset(
        s.indices, [&](std::int64_t i) { return source->stratum(i); }, source->numStrata(),
        spec.limit, seed);
    subsets.push_back(spec.path + ".limit: " + std::to_string(spec.limit) + " of " +
                      std::to_string(source->size()) +
                      " samples, a stratified random subset (seed " + std::to_string(seed) + ")");
  }
  s.source = std::move(source);
  return s;
}

void checkSameClasses(const DatasetSource& other, const std::string& path, const DataModule& m) {
  if (other.numClasses() != m.numClasses()) {
    throw Error(path + ": has " + std::to_string(other.numClasses()) +
                " classes but data.train has " + std::to_string(m.numClasses()) +
                "; every split needs the same classes");
  }
  if (other.targetNames() != m.targets || other.targetWidth() != m.train.source->targetWidth()) {
    throw Error(path + ": its targets differ from data.train's; every split needs the same");
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
  m.targets = train->targetNames();
  const std::uint64_t seed = config.split.seed;
  Exclusion exclusion;
  exclusion.entries.insert(config.exclude.begin(), config.exclude.end());
  SampleSet all = wholeSource("train", train, config.train, seed, m.subsets, exclusion);
  if (config.validation) {
    m.train = std::move(all);
    auto val = openSource(*config.validation, m.classes, config.onError);
    checkSameClasses(*val, config.validation->path, m);
    m.validation = wholeSource("validation", val, *config.validation, seed, m.subsets, exclusion);
  } else {
    // The split is taken from the (limited) training samples.
    const auto split = splitTrainValidation(
        all.size(), [&](std::int64_t k) { return train->stratum(all.indices[std::size_t(k)]); },
        train->numStrata(), config.split.fraction, config.split.seed, config.split.stratified);
    m.train = SampleSet{"train", train, {}};
    m.validation = SampleSet{"validation", train, {}};
    for (auto k : split.train)
      m.train.indices.push_back(all.indices[static_cast<std::size_t>(k)]);
    for (auto k : split.validation)
      m.validation.indices.push_back(all.indices[static_cast<std::size_t>(k)]);
    const std::int64_t limit = config.split.limit;
    if (limit > 0 && m.validation.size() > limit) {
      const auto before = m.validation.size();
      m.validation.indices = stratifiedSubset(
          m.validation.indices, [&](std::int64_t i) { return train->stratum(i); },
          train->numStrata(), limit, seed);
      m.subsets.push_back("data.validation.limit: " + std::to_string(limit) + " of " +
                          std::to_string(before) + " samples, a stratified random subset (seed " +
                          std::to_string(seed) + ")");
    }
  }
  if (m.train.empty())
    throw Error("data.validation: the split leaves no training samples; lower the fraction");
  if (config.test) {
    auto test = openSource(*config.test, m.classes, config.onError);
    checkSameClasses(*test, config.test->path, m);
    m.test = wholeSource("test", test, *config.test, seed, m.subsets, exclusion);
  } else {
    m.test.name = "test";
  }
  if (exclusion.found.size() < exclusion.entries.size()) {
    std::string first;
    for (const auto& e : config.exclude)
      if (!exclusion.found.count(e)) {
        first = e;
        break;
      }
    const auto missing = exclusion.entries.size() - exclusion.found.size();
    m.subsets.push_back("data.exclude: " + std::to_string(missing) +
                        (missing == 1 ? " entry names" : " entries name") +
                        " no sample of the data (the first: " + first + ")");
  }
  if (!m.validation.source) m.validation.name = "validation";
  return m;
}

std::string SampleSet::describeTarget(std::int64_t k) const {
  const auto i = indices[static_cast<std::size_t>(k)];
  const auto& classes = source->classNames();
  const auto width = source->targetWidth();
  if (source->hasMasks()) return "mask of " + std::to_string(classes.size()) + " classes";
  if (width == 0) {
    const auto label = source->label(i);
    return label >= 0 && label < std::int64_t(classes.size()) ? classes[std::size_t(label)]
                                                              : std::to_string(label);
  }
  std::string text;
  const auto& names = source->targetNames();
  if (names.empty()) {  // labels
    for (const auto c : source->positiveLabels(i))
      text += (text.empty() ? "" : ", ") +
              (std::size_t(c) < classes.size() ? classes[std::size_t(c)] : std::to_string(c));
  } else {
    const auto row = source->targetValues(i);
    for (std::size_t c = 0; c < row.size() && c < names.size(); ++c) {
      char value[32];
      std::snprintf(value, sizeof value, "%.4g", double(row[c]));
      text += (text.empty() ? "" : ", ") + names[c] + " " + value;
    }
  }
  return text.empty() ? "no label" : text;
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
