// The IDX reader (MNIST layout, raw or gzipped): the input is split into a labels file and an
// images file (see splitInput). Only netsmith::Error may come out.
#include "common/error.h"
#include "data/dataset_source.h"
#include "fuzz_data_sources.h"
#include "fuzz_input.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::splitInput(data, size);
  data::SourceSpec spec;
  spec.format = data::SourceFormat::Idx;
  spec.path = "data.train";
  spec.labels = fuzz::writeScratch(
      "labels.idx", reinterpret_cast<const std::uint8_t*>(parts.first.data()), parts.first.size());
  spec.images =
      fuzz::writeScratch("images.idx", reinterpret_cast<const std::uint8_t*>(parts.second.data()),
                         parts.second.size());
  try {
    fuzz::exerciseSource(data::openSource(spec, {}, data::ErrorPolicy::Skip));
  } catch (const Error&) {
  }
  return 0;
}
