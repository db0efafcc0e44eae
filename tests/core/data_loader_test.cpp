// The threaded loader: every sample once per epoch, ordered and deterministic batches whatever
// the worker count, skip/fail policies, batch mixes, and cancellation that does not hang.
#include "data/data_loader.h"

#include <chrono>
#include <set>

#include "augment/batch_mix.h"
#include "augment/transform.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::TempDir;

namespace {

struct IdxFixture {
  TempDir dir;
  std::shared_ptr<DatasetSource> source;
  SampleSet set;
  explicit IdxFixture(int count = 103) {
    const auto d = testutil::makeIdxData(count, 8, 8, 5);
    testutil::writeIdx(d, 8, 8, dir.file("i"), dir.file("l"), false);
    SourceSpec s;
    s.path = "data.train";
    s.images = dir.file("i");
    s.labels = dir.file("l");
    source = openSource(s, {}, ErrorPolicy::Skip);
    set = SampleSet{"train", source, {}};
    for (std::int64_t i = 0; i < source->size(); ++i)
      set.indices.push_back(i);
  }
};

augment::Pipeline makePipeline(const std::string& json, int channels = 1, int size = 8) {
  Problems problems;
  augment::TransformContext ctx;
  ctx.channels = channels;
  ctx.height = ctx.width = size;
  ctx.mean.assign(static_cast<std::size_t>(channels), 0.0);
  ctx.std.assign(static_cast<std::size_t>(channels), 1.0);
  auto p = augment::Pipeline::fromJson(Json::parse(json),
                                       augment::TransformRegistry::withBuiltins(), ctx, problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return p;
}

// Every sample of an image folder.
SampleSet folderSet(const std::string& root) {
  SourceSpec s;
  s.format = SourceFormat::ImageFolder;
  s.path = "data.train";
  s.root = root;
  SampleSet set{"train", openSource(s, {}, ErrorPolicy::Skip), {}};
  for (std::int64_t i = 0; i < set.source->size(); ++i)
    set.indices.push_back(i);
  return set;
}

std::vector<Batch> drain(DataLoader& loader, std::int64_t epoch) {
  loader.startEpoch(epoch);
  std::vector<Batch> out;
  while (auto b = loader.next())
    out.push_back(std::move(*b));
  return out;
}

}  // namespace

TEST(DataLoader, EverySampleOncePerEpochInShuffledOrder) {
  IdxFixture f;
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, nullptr, {}, {});
  LoaderOptions o;
  o.batchSize = 10;
  o.workers = 3;
  DataLoader loader(f.set, proc, o);
  EXPECT_EQ(loader.batchesPerEpoch(), 11);
  const auto e0 = drain(loader, 0);
  ASSERT_EQ(e0.size(), 11u);
  std::multiset<std::int64_t> seen;
  std::vector<std::int64_t> order;
  for (const auto& b : e0) {
    EXPECT_EQ(b.images.dim(), 4);
    EXPECT_TRUE(b.images.is_contiguous());
    EXPECT_EQ(b.images.scalar_type(), torch::kFloat);
    EXPECT_EQ(b.images.size(0), b.labels.size(0));
    for (std::size_t i = 0; i < b.samples.size(); ++i) {
      seen.insert(b.samples[i]);
      order.push_back(b.samples[i]);
      EXPECT_EQ(b.labels[static_cast<long>(i)].item<std::int64_t>(), f.set.label(b.samples[i]));
    }
  }
  EXPECT_EQ(e0.back().images.size(0), 3);
  ASSERT_EQ(seen.size(), 103u);
  for (std::int64_t k = 0; k < 103; ++k)
    EXPECT_EQ(seen.count(k), 1u);
  std::vector<std::int64_t> sorted(order);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(order, sorted) << "shuffled";
  std::vector<std::int64_t> order1;
  for (const auto& b : drain(loader, 1))
    order1.insert(order1.end(), b.samples.begin(), b.samples.end());
  EXPECT_NE(order1, order) << "a new order every epoch";
  // Pixel content matches the sample (no normalisation: value / 255).
  const auto& b0 = e0.front();
  const cv::Mat expected = f.source->load(b0.samples[0]);
  EXPECT_FLOAT_EQ(b0.images[0][0][2][3].item<float>(), expected.at<unsigned char>(2, 3) / 255.0f);
}

TEST(DataLoader, BalancedSamplerDrawsEveryClassEquallyOftenAndTheSameOrderAnywhere) {
  IdxFixture f(1000);  // labels i % 5
  // Unbalanced: all 200 samples of class 0 and 10 of each other class.
  SampleSet unbalanced{"train", f.source, {}};
  std::vector<int> taken(5, 0);
  for (std::int64_t i = 0; i < f.source->size(); ++i) {
    const auto c = f.source->label(i);
    if (c == 0 || taken[std::size_t(c)] < 10) {
      unbalanced.indices.push_back(i);
      ++taken[std::size_t(c)];
    }
  }
  ASSERT_EQ(unbalanced.size(), 240);
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, nullptr, {}, {});
  LoaderOptions o;
  o.batchSize = 32;
  o.workers = 3;
  o.numClasses = 5;
  o.balanced = true;
  const auto counts = [&](DataLoader& loader, int epochs, std::vector<std::int64_t>* order) {
    std::vector<std::int64_t> perClass(5, 0);
    for (int e = 0; e < epochs; ++e) {
      std::int64_t drawn = 0;
      for (const auto& b : drain(loader, e)) {
        for (std::size_t i = 0; i < b.samples.size(); ++i) {
          const auto k = b.samples[i];
          EXPECT_GE(k, 0);
          EXPECT_LT(k, unbalanced.size());
          EXPECT_EQ(b.labels[long(i)].item<std::int64_t>(), unbalanced.label(k));
          ++perClass[std::size_t(unbalanced.label(k))];
          if (order) order->push_back(k);
        }
        drawn += b.images.size(0);
      }
      EXPECT_EQ(drawn, unbalanced.size()) << "an epoch is as long as the split";
    }
    return perClass;
  };
  std::vector<std::int64_t> order3, order1;
  DataLoader balanced(unbalanced, proc, o);
  EXPECT_EQ(balanced.batchesPerEpoch(), 8);
  const auto drawn = counts(balanced, 20, &order3);
  // 4,800 draws, each class with probability 1/5: 960 expected, standard deviation 28.
  for (int c = 0; c < 5; ++c) {
    EXPECT_GT(drawn[std::size_t(c)], 960 - 150) << "class " << c;
    EXPECT_LT(drawn[std::size_t(c)], 960 + 150) << "class " << c;
  }
  // The same draws with one worker (and so in every process of a data-parallel run).
  o.workers = 1;
  DataLoader again(unbalanced, proc, o);
  counts(again, 20, &order1);
  EXPECT_EQ(order1, order3);
  // A plain shuffle keeps the split's shares: 200 of 240 are class 0.
  o.balanced = false;
  DataLoader shuffled(unbalanced, proc, o);
  const auto plain = counts(shuffled, 1, nullptr);
  EXPECT_EQ(plain[0], 200);
  EXPECT_EQ(plain[1], 10);
}

TEST(DataLoader, DropLastAndChannelsLast) {
  IdxFixture f;
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, nullptr, {}, {});
  LoaderOptions o;
  o.batchSize = 10;
  o.dropLast = true;
  o.channelsLast = true;
  o.workers = 2;
  DataLoader loader(f.set, proc, o);
  const auto batches = drain(loader, 0);
  EXPECT_EQ(batches.size(), 10u);
  for (const auto& b : batches) {
    EXPECT_EQ(b.images.size(0), 10);
    EXPECT_TRUE(b.images.is_contiguous(torch::MemoryFormat::ChannelsLast));
  }
}

TEST(DataLoader, BatchesAreIdenticalWithOneOrFourWorkers) {
  IdxFixture f;
  const auto pipeline = makePipeline(R"([{"transform": "GaussianNoise", "std": 0.1},
                                         {"transform": "Normalize", "mean": 0.5, "std": 0.25}, {"transform": "MixUp", "alpha": 0.4}])");
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, &pipeline, {}, {});
  std::vector<std::vector<Batch>> runs;
  for (int workers : {1, 4}) {
    LoaderOptions o;
    o.batchSize = 16;
    o.workers = workers;
    o.seed = 11;
    o.numClasses = 5;
    o.mixes = pipeline.batchMixes();
    DataLoader loader(f.set, proc, o);
    runs.push_back(drain(loader, 2));
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (std::size_t b = 0; b < runs[0].size(); ++b) {
    EXPECT_EQ(runs[0][b].samples, runs[1][b].samples);
    EXPECT_TRUE(torch::equal(runs[0][b].images, runs[1][b].images)) << "batch " << b;
    EXPECT_TRUE(torch::equal(runs[0][b].targets, runs[1][b].targets)) << "batch " << b;
  }
}

TEST(DataLoader, ValidationGetsOnlyDeterministicSteps) {
  IdxFixture f;
  const auto pipeline =
      makePipeline(R"([{"transform": "GaussianNoise", "std": 0.3}, {"transform": "MixUp"}])");
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, &pipeline, {}, {});
  LoaderOptions o;
  o.batchSize = 8;
  o.training = false;
  o.shuffle = false;
  o.mixes = pipeline.batchMixes();
  o.numClasses = 5;
  DataLoader loader(f.set, proc, o);
  const auto batches = drain(loader, 0);
  const cv::Mat raw = f.source->load(0);
  EXPECT_FLOAT_EQ(batches[0].images[0][0][1][1].item<float>(),
                  raw.at<unsigned char>(1, 1) / 255.0f);
  EXPECT_FALSE(batches[0].targets.defined());
}

TEST(DataLoader, CorruptSamplesAreSkippedAndNamedOrStopTheRun) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"a", "b"}, 6, 8, 8, 1);
  std::ofstream(dir.file("a/zz_corrupt.png")) << "garbage";
  const SampleSet set = folderSet(dir.path().string());
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, nullptr, {}, {});
  LoaderOptions o;
  o.batchSize = 4;
  o.workers = 2;
  {
    DataLoader loader(set, proc, o);
    std::int64_t total = 0;
    for (const auto& b : drain(loader, 0))
      total += b.images.size(0);
    EXPECT_EQ(total, 12);
    EXPECT_EQ(loader.skippedCount(), 1);
    const auto warnings = loader.takeWarnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].item.find("zz_corrupt.png"), std::string::npos);
  }
  o.onError = ErrorPolicy::Fail;
  DataLoader strict(set, proc, o);
  strict.startEpoch(0);
  try {
    while (strict.next()) {
    }
    FAIL() << "expected the corrupt file to stop the epoch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("zz_corrupt.png: not a readable image"), std::string::npos)
        << e.what();
  }
}

TEST(DataLoader, StopMidEpochReturnsPromptly) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"a"}, 40, 256, 256, 3, ".png");
  const SampleSet set = folderSet(dir.path().string());
  const SampleProcessor proc({3, 224, 224, FitPolicy::ResizeCrop}, nullptr, {}, {});
  LoaderOptions o;
  o.batchSize = 8;
  o.workers = 4;
  DataLoader loader(set, proc, o);
  loader.startEpoch(0);
  ASSERT_TRUE(loader.next());
  const auto start = std::chrono::steady_clock::now();
  loader.stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);
  EXPECT_FALSE(loader.next());
  // A new epoch after a stop works.
  loader.startEpoch(1);
  EXPECT_TRUE(loader.next());
  // Destroying a loader mid-epoch joins its workers.
}

TEST(BatchMix, MixUpAndCutMixTargetsSumToOne) {
  torch::manual_seed(0);
  for (auto kind : {augment::BatchMix::Kind::MixUp, augment::BatchMix::Kind::CutMix}) {
    auto images = torch::rand({8, 3, 16, 16});
    const auto original = images.clone();
    const auto labels = torch::arange(8) % 4;
    auto targets = augment::oneHot(labels, 4);
    augment::SampleRng rng(5);
    augment::BatchMix mix;
    mix.kind = kind;
    mix.alpha = 1.0;
    const double lambda = augment::applyBatchMix(images, targets, {mix}, rng);
    EXPECT_GT(lambda, 0.0);
    EXPECT_LT(lambda, 1.0);
    EXPECT_TRUE(torch::allclose(targets.sum(1), torch::ones({8}), 1e-6, 1e-6));
    EXPECT_FALSE(torch::equal(images, original));
    if (kind == augment::BatchMix::Kind::CutMix) {
      // The share of pixels that changed matches the label weight of the partner, for samples
      // whose partner is a different image.
      const auto changed = (images != original).any(1).to(torch::kFloat).mean({1, 2});
      const auto maxChanged = changed.max().item<double>();
      EXPECT_NEAR(maxChanged, 1.0 - lambda, 1e-6);
    }
  }
}

// Data parallelism: W loaders (one per rank) over the same shuffled order. Their batch b
// together is the single-process batch b of size B x W; every sample is seen exactly once per
// epoch across ranks, also when the last global batch leaves some ranks fewer samples or none.
TEST(DataLoader, RanksShareEveryGlobalBatchAndSeeEachSampleOnce) {
  IdxFixture f;  // 103 samples
  const SampleProcessor proc({1, 8, 8, FitPolicy::Resize}, nullptr, {}, {});
  for (const int world : {2, 3, 4}) {
    for (const std::int64_t batch : {std::int64_t(8), std::int64_t(34)}) {
      LoaderOptions single;
      single.batchSize = batch * world;
      single.workers = 2;
      single.seed = 11;
      DataLoader whole(f.set, proc, single);
      const auto reference = drain(whole, 1);
      std::multiset<std::int64_t> seen;
      std::vector<std::vector<Batch>> perRank;
      for (int r = 0; r < world; ++r) {
        LoaderOptions o = single;
        o.batchSize = batch;
        o.rank = r;
        o.worldSize = world;
        DataLoader loader(f.set, proc, o);
        EXPECT_EQ(loader.batchesPerEpoch(), whole.batchesPerEpoch());
        perRank.push_back(drain(loader, 1));
        ASSERT_EQ(perRank.back().size(), reference.size()) << "world " << world;
        for (const auto& b : perRank.back()) {
          EXPECT_LE(b.labels.size(0), batch);
          EXPECT_EQ(b.images.size(0), b.labels.size(0));
          seen.insert(b.samples.begin(), b.samples.end());
        }
      }
      ASSERT_EQ(seen.size(), 103u) << "world " << world << " batch " << batch;
      for (std::int64_t k = 0; k < 103; ++k)
        EXPECT_EQ(seen.count(k), 1u) << "sample " << k << ", world " << world;
      // Rank shares, in rank order, are the single process's batch.
      for (std::size_t b = 0; b < reference.size(); ++b) {
        std::vector<std::int64_t> joined;
        std::int64_t smallest = batch, largest = 0;
        for (int r = 0; r < world; ++r) {
          const auto& s = perRank[static_cast<std::size_t>(r)][b].samples;
          joined.insert(joined.end(), s.begin(), s.end());
          smallest = std::min<std::int64_t>(smallest, std::int64_t(s.size()));
          largest = std::max<std::int64_t>(largest, std::int64_t(s.size()));
          EXPECT_EQ(perRank[static_cast<std::size_t>(r)][b].globalCount,
                    std::int64_t(reference[b].samples.size()));
        }
        EXPECT_EQ(joined, reference[b].samples) << "batch " << b << ", world " << world;
        EXPECT_LE(largest - smallest, 1) << "shares as even as possible";
      }
    }
  }
  // 103 = 12 x 8 + 7: with 8 ranks of 1 sample the last global batch leaves rank 7 nothing.
  LoaderOptions o;
  o.batchSize = 1;
  o.worldSize = 8;
  o.rank = 7;
  o.workers = 1;
  DataLoader last(f.set, proc, o);
  const auto batches = drain(last, 0);
  ASSERT_EQ(batches.size(), 13u);
  EXPECT_EQ(batches.back().labels.size(0), 0);
  EXPECT_EQ(batches.back().images.size(0), 0);
  // drop_last drops the short global batch on every rank alike.
  o.dropLast = true;
  DataLoader dropped(f.set, proc, o);
  EXPECT_EQ(dropped.batchesPerEpoch(), 12);
}
