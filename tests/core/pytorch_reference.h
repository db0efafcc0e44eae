#pragma once

// What the tests that check an exported model against Debian's PyTorch share: the model's
// weights and model.py (the PyTorch exporter's) with an input beside them, and a script run on
// them with /usr/bin/python3.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "data_fixtures.h"
#include "export/export_model.h"
#include "export/exporter.h"

namespace netsmith::testutil {

/// `model` as model.safetensors and model.py in `dir`, and `x` as x.safetensors.
inline void writeForPyTorch(const exporting::ExportModel& model, const TempDir& dir,
                            const torch::Tensor& x) {
  const auto exporters = exporting::ExporterRegistry::withBuiltins();
  exporting::ExportRequest request;
  request.path = dir.file("model.safetensors");
  exporters.find("safetensors")->run(model, request);
  request.path = dir.file("model.py");
  exporters.find("pytorch")->run(model, request);
  checkpoint::writeSafetensors(dir.file("x.safetensors"), {{"x", x}}, {});
}

/// Runs `body` with /usr/bin/python3 after the lines that load writeForPyTorch's files (`net`,
/// the model in eval mode; `x`, the input); its standard output. A script that fails fails the
/// test, with its error output and model.py.
inline std::string runWithPyTorch(const TempDir& dir, const std::string& body) {
  std::ofstream(dir.file("run.py"))
      << "import sys\nsys.path.insert(0, sys.argv[1])\nimport torch\nimport model as m\n"
         "net = m.Model()\n"
         "net.load_state_dict(m.load_safetensors(sys.argv[1] + '/model.safetensors'), "
         "strict=True)\n"
         "net.eval()\n"
         "x = m.load_safetensors(sys.argv[1] + '/x.safetensors')['x']\n"
      << body;
  const std::string cmd = "/usr/bin/python3 " + dir.file("run.py") + " " + dir.path().string() +
                          " > " + dir.file("out.txt") + " 2> " + dir.file("err.txt");
  const int rc = std::system(cmd.c_str());
  const std::string out = readTextFile(dir.file("out.txt"));
  EXPECT_EQ(rc, 0) << out << readTextFile(dir.file("err.txt")) << "\n--- model.py ---\n"
                   << readTextFile(dir.file("model.py"));
  return out;
}

}  // namespace netsmith::testutil
