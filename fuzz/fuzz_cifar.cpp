// The CIFAR-10 binary batch reader. The first byte picks the class list (the built-in ten or
// three given names) and the error policy; the rest is the batch file.
#include "common/error.h"
#include "data/dataset_source.h"
#include "fuzz_data_sources.h"
#include "fuzz_input.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  data::SourceSpec spec;
  spec.format = data::SourceFormat::Cifar10;
  spec.path = "data.train";
  spec.files = {fuzz::writeScratch("data_batch_1.bin", data + 1, size - 1)};
  const auto mode = fuzz::sourceMode(data[0], {"a", "b", "c"});
  try {
    fuzz::exerciseSource(data::openSource(spec, mode.classes, mode.policy));
  } catch (const Error&) {
  }
  return 0;
}
