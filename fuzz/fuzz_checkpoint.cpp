// A checkpoint as `eval` and `export` read it: the safetensors file, the metadata checked
// against its schema, the project snapshot parsed and its model built, the weights loaded.
// Only netsmith::Error may come out.
#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "export/export_model.h"
#include "fuzz_input.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::writeScratch("checkpoint.safetensors", data, size);
  try {
    const auto model = exporting::loadExportModel(path);
    (void)model.metadata();
  } catch (const Error&) {
  }
  return 0;
}
