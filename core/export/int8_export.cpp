#include "export/int8_export.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace netsmith::exporting {

namespace {

/// Images [from, from + count) of the calibration set, as one batch.
HostTensor imagesOf(const std::vector<HostTensor>& batches, std::int64_t from, std::int64_t count) {
  HostTensor out;
  for (const auto& b : batches) {
    const std::int64_t n = b.dims.at(0), per = n ? std::int64_t(b.values.size()) / n : 0;
    if (out.dims.empty()) out.dims = b.dims, out.dims[0] = 0;
    const std::int64_t first = std::max<std::int64_t>(from, 0), last = std::min(n, from + count);
    if (first < last)
      out.values.insert(out.values.end(), b.values.begin() + first * per,
                        b.values.begin() + last * per);
    if (first < last) out.dims[0] += last - first;
    from -= n;
  }
  return out;
}

}  // namespace

Int8Model quantizeWithCalibration(const OnnxRuntimeLocation& ort, const std::string& floatBytes,
                                  const std::vector<HostTensor>& calibration,
                                  const Int8Options& options) {
  Int8Model out;
  for (const auto& batch : calibration) {
    if (batch.dims.size() != 4 || std::int64_t(batch.values.size()) != batch.count())
      throw Error("int8 export: a calibration batch is not N x C x H x W floats");
    out.calibrationImages += batch.dims[0];
  }
  if (out.calibrationImages == 0) throw Error("int8 export: no calibration images");
  out.plan = planQuantization(floatBytes);
  // ONNX Runtime runs a few images at a time, so that one run's activations stay near
  // kRunBytes whatever the model's size; every value keeps an even subsample of at most
  // maxSamplesPerValue values over all runs.
  constexpr std::int64_t kRunBytes = std::int64_t(128) << 20;
  std::map<std::string, std::vector<float>> samples;
  std::int64_t done = 0, perRun = 1, perRunSamples = options.maxSamplesPerValue;
  while (done < out.calibrationImages) {
    const std::int64_t count = std::min(perRun, out.calibrationImages - done);
    OnnxRuntimeFeed feed;
    feed.inputs.emplace("input", imagesOf(calibration, done, count));
    feed.outputs = out.plan.values;
    const auto result = runOnnxRuntimeOnBytes(ort, out.plan.calibrationBytes, {feed});
    std::int64_t floats = 0;
    for (const auto& name : out.plan.values) {
      const auto& values = result.at(0).at(name).values;
      floats += std::int64_t(values.size());
      auto& kept = samples[name];
      const auto n = std::int64_t(values.size());
      const std::int64_t step =
          std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, perRunSamples));
      for (std::int64_t i = 0; i < n; i += step)
        kept.push_back(values[std::size_t(i)]);
    }
    if (done == 0) {  // the first run, one image, sizes the rest
      perRun = std::clamp<std::int64_t>(kRunBytes / std::max<std::int64_t>(1, floats * 4), 1, 64);
      const std::int64_t runs = 1 + (out.calibrationImages - 1 + perRun - 1) / perRun;
      perRunSamples = std::max<std::int64_t>(1, options.maxSamplesPerValue / runs);
    }
    done += count;
  }
  std::map<std::string, ActivationRange> ranges;
  for (auto& [name, values] : samples)
    ranges[name] = clippedRange(std::move(values), options.percentile);
  out.bytes = quantizeQdq(out.plan, ranges, options.metadata);
  return out;
}

}  // namespace netsmith::exporting
