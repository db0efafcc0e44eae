#include "checkpoint/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.h"
#include "common/torch_compat.h"

namespace netsmith::checkpoint {

namespace {

constexpr const char* kFormat = "netsmith-checkpoint";
constexpr int kVersion = 1;

std::string shapeText(const torch::Tensor& t) {
  std::string s;
  for (auto d : t.sizes())
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < 6; ++i)
    s += (i ? ", " : "") + names[i];
  if (names.size() > 6) s += ", ...";
  return s;
}

torch::Tensor stepTensor(std::int64_t step) {
  return torch::tensor(step, torch::kLong);
}

// Adam and AdamW keep the same per-parameter state under different class names.
template <typename State>
void saveAdamState(State& s, const std::string& prefix, NamedTensors& out) {
  out.emplace_back(prefix + "step", stepTensor(s.step()));
  const std::pair<const char*, torch::Tensor> fields[] = {{"exp_avg", s.exp_avg()},
                                                          {"exp_avg_sq", s.exp_avg_sq()},
                                                          {"max_exp_avg_sq", s.max_exp_avg_sq()}};
  for (const auto& [field, t] : fields) {
    if (t.defined()) out.emplace_back(prefix + field, t);
  }
}

template <typename State>
std::unique_ptr<State> restoreAdamState(std::int64_t step, const torch::Tensor& expAvg,
                                        const torch::Tensor& expAvgSq,
                                        const torch::Tensor& maxExpAvgSq) {
  auto st = std::make_unique<State>();
  st->step(step);
  st->exp_avg(expAvg);
  st->exp_avg_sq(expAvgSq);
  st->max_exp_avg_sq(maxExpAvgSq);
  return st;
}

}  // namespace

std::string LoadReport::summary() const {
  auto part = [](const char* what, const std::vector<std::string>& v) {
    return std::string(what) + " " + std::to_string(v.size()) +
           (v.empty() ? "" : " (" + listed(v) + ")");
  };
  return "loaded " + std::to_string(loaded.size()) + ", " + part("missing", missing) + ", " +
         part("unexpected", unexpected) + ", " + part("shape mismatch", shapeMismatch);
}

NamedTensors moduleState(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters())
    out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers())
    out.emplace_back(b.key(), b.value());
  return out;
}

LoadReport loadModuleState(torch::nn::Module& module, const NamedTensors& state) {
  LoadReport report;
  std::map<std::string, torch::Tensor> targets;
  for (const auto& p : module.named_parameters())
    targets[p.key()] = p.value();
  for (const auto& b : module.named_buffers())
    targets[b.key()] = b.value();
  std::map<std::string, bool> seen;
  torch::NoGradGuard noGrad;
  for (const auto& [name, tensor] : state) {
    auto it = targets.find(name);
    if (it == targets.end()) {
      report.unexpected.push_back(name);
      continue;
    }
    seen[name] = true;
    if (it->second.sizes() != tensor.sizes()) {
      report.shapeMismatch.push_back(name + ": file " + shapeText(tensor) + ", model " +
                                     shapeText(it->second));
      continue;
    }
    it->second.copy_(tensor.to(it->second.device(), it->second.scalar_type()));
    report.loaded.push_back(name);
  }
  for (const auto& [name, tensor] : targets) {
    if (!seen.count(name)) report.missing.push_back(name);
  }
  return report;
}

NamedTensors optimizerState(torch::optim::Optimizer& optimizer, const std::string& type,
                            const torch::nn::Module& module) {
  namespace o = torch::optim;
  NamedTensors out;
  auto& states = optimizer.state();
  for (const auto& p : module.named_parameters()) {
    auto it = states.find(compat::stateKey(states, p.value()));
    if (it == states.end()) continue;
    const std::string prefix = p.key() + "/";
    auto add = [&](const char* field, const torch::Tensor& t) {
      if (t.defined()) out.emplace_back(prefix + field, t);
    };
    if (type == "sgd") {
      add("momentum_buffer", static_cast<o::SGDParamState&>(*it->second).momentum_buffer());
    } else if (type == "adam") {
      saveAdamState(static_cast<o::AdamParamState&>(*it->second), prefix, out);
    } else if (type == "adamw") {
      saveAdamState(static_cast<o::AdamWParamState&>(*it->second), prefix, out);
    } else if (type == "rmsprop") {
      auto& s = static_cast<o::RMSpropParamState&>(*it->second);
      out.emplace_back(prefix + "step", stepTensor(s.step()));
      add("square_avg", s.square_avg());
      add("momentum_buffer", s.momentum_buffer());
      add("grad_avg", s.grad_avg());
    } else if (type == "adagrad") {
      auto& s = static_cast<o::AdagradParamState&>(*it->second);
      out.emplace_back(prefix + "step", stepTensor(s.step()));
      add("sum", s.sum());
    } else {
      throw Error("checkpoint: unknown optimizer \"" + type + "\"");
    }
  }
  return out;
}

void restoreOptimizerState(torch::optim::Optimizer& optimizer, const std::string& type,
                           const torch::nn::Module& module, const NamedTensors& state) {
  namespace o = torch::optim;
  std::map<std::string, torch::Tensor> byName(state.begin(), state.end());
  auto& states = optimizer.state();
  for (const auto& p : module.named_parameters()) {
    const std::string prefix = p.key() + "/";
    auto get = [&](const char* field) -> torch::Tensor {
      auto it = byName.find(prefix + field);
      if (it == byName.end()) return {};
      if (it->second.numel() != 1 && it->second.sizes() != p.value().sizes()) {
        throw Error("checkpoint: optimizer state \"" + prefix + field +
                    "\" does not fit parameter " + p.key());
      }
      return it->second.to(p.value().device()).clone();
    };
    auto step = [&]() -> std::int64_t {
      const auto t = get("step");
      return t.defined() ? t.item<std::int64_t>() : 0;
    };
    std::unique_ptr<o::OptimizerParamState> s;
    if (type == "sgd") {
      const auto buf = get("momentum_buffer");
      if (!buf.defined()) continue;
      auto st = std::make_unique<o::SGDParamState>();
      st->momentum_buffer(buf);
      s = std::move(st);
    } else if (type == "adam" || type == "adamw") {
      const auto expAvg = get("exp_avg");
      if (!expAvg.defined()) continue;
      if (type == "adam") {
        s = restoreAdamState<o::AdamParamState>(step(), expAvg, get("exp_avg_sq"),
                                                get("max_exp_avg_sq"));
      } else {
        s = restoreAdamState<o::AdamWParamState>(step(), expAvg, get("exp_avg_sq"),
                                                 get("max_exp_avg_sq"));
      }
    } else if (type == "rmsprop") {
      const auto sq = get("square_avg");
      if (!sq.defined()) continue;
      auto st = std::make_unique<o::RMSpropParamState>();
      st->step(step());
      st->square_avg(sq);
      st->momentum_buffer(get("momentum_buffer"));
      st->grad_avg(get("grad_avg"));
      s = std::move(st);
    } else if (type == "adagrad") {
      const auto sum = get("sum");
      if (!sum.defined()) continue;
      auto st = std::make_unique<o::AdagradParamState>();
      st->step(step());
      st->sum(sum);
      s = std::move(st);
    } else {
      throw Error("checkpoint: unknown optimizer \"" + type + "\"");
    }
    states[compat::stateKey(states, p.value())] = std::move(s);
  }
}

void writeCheckpoint(const std::string& path, const CheckpointData& data) {
  NamedTensors all;
  for (const auto& [name, t] : data.model)
    all.emplace_back("model/" + name, t);
  for (const auto& [name, t] : data.optimizer)
    all.emplace_back("optim/" + name, t);
  Json meta = data.meta;
  meta["format"] = kFormat;
  meta["version"] = kVersion;
  writeSafetensors(path, all, {{"netsmith", meta.dump()}});
}

void validateCheckpointMeta(const Json& meta, const std::string& path) {
  auto bad = [&](const std::string& key, const std::string& expected) {
    return Error(path + ": corrupt checkpoint metadata: \"" + key + "\" must be " + expected +
                 ", got " + jsonBrief(meta[key]));
  };
  auto wholeAtLeast0 = [&](const char* key) {
    if (meta.contains(key) &&
        !(meta[key].is_number_unsigned() ||
          (meta[key].is_number_integer() && meta[key].get<std::int64_t>() >= 0)))
      throw bad(key, "a whole number >= 0");
  };
  wholeAtLeast0("version");
  wholeAtLeast0("epoch");
  wholeAtLeast0("step");
  for (const char* key : {"project_name", "model_signature", "optimizer", "base_dir"}) {
    if (meta.contains(key) && !meta[key].is_string()) throw bad(key, "a string");
  }
  for (const char* key : {"project", "loop", "schedule", "plan", "rng", "metrics"}) {
    if (meta.contains(key) && !meta[key].is_object()) throw bad(key, "an object");
  }
  if (meta.contains("classes")) {
    const auto& c = meta["classes"];
    if (!c.is_array() ||
        !std::all_of(c.begin(), c.end(), [](const Json& v) { return v.is_string(); }))
      throw bad("classes", "a list of class names");
  }
  if (meta.contains("normalization")) {
    const auto& n = meta["normalization"];
    auto numbers = [](const Json& v) {
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const Json& x) {
               return x.is_number() && std::isfinite(x.get<double>());
             });
    };
    if (!n.is_object() || !n.contains("mean") || !n.contains("std") || !numbers(n["mean"]) ||
        !numbers(n["std"]) || n["mean"].size() != n["std"].size())
      throw bad("normalization", "{\"mean\": [...], \"std\": [...]} of equal lengths");
    for (const auto& s : n["std"])
      if (!(s.get<double>() > 0)) throw bad("normalization", "std values above 0");
  }
}

CheckpointData readCheckpoint(const std::string& path) {
  const auto file = readSafetensors(path);
  const auto it = file.metadata.find("netsmith");
  if (it == file.metadata.end()) {
    throw Error(path +
                ": a safetensors file, but not a Netsmith checkpoint (no \"netsmith\" metadata); "
                "use it with --init-from to load matching weights");
  }
  CheckpointData out;
  checkJsonNesting(it->second, path + ": the checkpoint's metadata");
  try {
    out.meta = Json::parse(it->second);
  } catch (const std::exception&) {
    throw Error(path + ": corrupt checkpoint metadata");
  }
  if (!out.meta.is_object() || !out.meta.contains("format") || out.meta["format"] != kFormat)
    throw Error(path + ": not a Netsmith checkpoint");
  validateCheckpointMeta(out.meta, path);
  if (out.meta.value("version", 0) > kVersion) {
    throw Error(path + ": written by a newer Netsmith (checkpoint version " +
                std::to_string(out.meta.value("version", 0)) + ")");
  }
  for (const auto& [name, t] : file.tensors) {
    if (name.rfind("model/", 0) == 0) {
      out.model.emplace_back(name.substr(6), t);
    } else if (name.rfind("optim/", 0) == 0) {
      out.optimizer.emplace_back(name.substr(6), t);
    }
  }
  return out;
}

}  // namespace netsmith::checkpoint
