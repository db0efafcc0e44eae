// A checkpoint as `eval` and `export` read it: the safetensors file, the metadata checked
// against its schema, the project snapshot parsed and its model built, the weights loaded.
// Only netsmith::Error may come out.
#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "export/export_model.h"
#include "fuzz_input.h"
#include "registries/registries.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registries = Registries::builtins();
  const std::string path = fuzz::writeScratch("checkpoint.safetensors", data, size);
  try {
    const auto model = exporting::loadExportModel(path, registries);
    (void)model.metadata();
  } catch (const Error&) {
  }
  return 0;
}
