#include "train/train_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace netsmith::train {

namespace {

using schema::ParamSpec;

schema::ParamSchema common(double lr, double weightDecay) {
  return {ParamSpec::real("lr", lr, "learning rate").above(0).atMost(100),
          ParamSpec::real("weight_decay", weightDecay, "L2 penalty (decoupled for AdamW)")
              .atLeast(0)
              .atMost(1),
          ParamSpec::boolean("no_decay_norm_and_bias", false,
                             "exclude BatchNorm and bias parameters from weight decay")};
}

const std::map<std::string, schema::ParamSchema>& schemas() {
  static const std::map<std::string, schema::ParamSchema> kSchemas = [] {
    std::map<std::string, schema::ParamSchema> m;
    auto sgd = common(0.01, 0.0);
    sgd.push_back(ParamSpec::real("momentum", 0.9, "momentum factor").atLeast(0).atMost(0.9999));
    sgd.push_back(ParamSpec::real("dampening", 0.0, "dampening for momentum").atLeast(0).atMost(1));
    sgd.push_back(ParamSpec::boolean("nesterov", false,
                                     "Nesterov momentum (needs momentum > 0, dampening 0)"));
    m["sgd"] = sgd;
    for (const char* adam : {"adam", "adamw"}) {
      auto a = common(0.001, std::string(adam) == "adamw" ? 0.01 : 0.0);
      a.push_back(
          ParamSpec::floatPair("betas", Json::array({0.9, 0.999}), "running average coefficients")
              .atLeast(0)
              .atMost(0.99999));
      a.push_back(ParamSpec::real("eps", 1e-8, "added to the denominator").above(0).atMost(1));
      a.push_back(ParamSpec::boolean("amsgrad", false, "use the AMSGrad variant"));
      m[adam] = a;
    }
    auto rms = common(0.01, 0.0);
    rms.push_back(ParamSpec::real("alpha", 0.99, "smoothing constant").atLeast(0).atMost(1));
    rms.push_back(ParamSpec::real("eps", 1e-8, "added to the denominator").above(0).atMost(1));
    rms.push_back(ParamSpec::real("momentum", 0.0, "momentum factor").atLeast(0).atMost(0.9999));
    rms.push_back(ParamSpec::boolean("centered", false, "normalise by the estimated variance"));
    m["rmsprop"] = rms;
    auto ada = common(0.01, 0.0);
    ada.push_back(ParamSpec::real("lr_decay", 0.0, "learning rate decay").atLeast(0));
    ada.push_back(
        ParamSpec::real("initial_accumulator_value", 0.0, "starting value of the accumulators")
            .atLeast(0));
    ada.push_back(ParamSpec::real("eps", 1e-10, "added to the denominator").above(0).atMost(1));
    m["adagrad"] = ada;
    return m;
  }();
  return kSchemas;
}

const std::vector<std::string>& metricNames() {
  static const std::vector<std::string> kNames{"val_loss", "val_accuracy", "train_loss",
                                               "train_accuracy"};
  return kNames;
}

}  // namespace

std::string metricTypo(const MetricChoice& metric) {
  // Only the figure is compared, and only with the built-in ones: train_rmse is a figure of
  // some task, train_los a typo.
  static const std::vector<std::string> kBuiltIn{"loss", "accuracy"};
  const std::string figure = metric.figure();
  if (std::find(kBuiltIn.begin(), kBuiltIn.end(), figure) != kBuiltIn.end()) return {};
  const auto near = schema::closestName(figure, kBuiltIn);
  return near.empty() ? near : metric.name.substr(0, metric.name.size() - figure.size()) + near;
}

namespace {

/// "" for a metric name; else why not: no split, or a near miss of a built-in name (a typo,
/// not a figure of some task).
std::string metricProblem(const std::string& name) {
  MetricChoice m;
  if (!parseMetricChoice(name, "auto", m))
    return "\"" + name + "\" is not val_<figure> or train_<figure> (val_loss, val_accuracy, ...)";
  if (const auto near = metricTypo(m); !near.empty())
    return "unknown metric \"" + name + "\"; did you mean \"" + near + "\"?";
  return {};
}

// Reads an object section ({"metric": ..., "mode": ..., other params}) against `schema`.
schema::Params readMetricSection(const Json& train, const std::string& key,
                                 const schema::ParamSchema& schema, MetricChoice& metric,
                                 bool& enabled, Problems& problems) {
  if (!train.contains(key) || train[key].is_null() || train[key] == false) return {};
  const std::string path = "train." + key;
  if (!train[key].is_object()) {
    problems.push_back({path, "must be an object (or null to turn it off)", {}, {}});
    return {};
  }
  const std::size_t before = problems.size();
  auto p = schema::resolveParamsAt(schema, train[key], path, problems);
  if (problems.size() != before) return {};
  if (auto why = metricProblem(p.text("metric")); !why.empty()) {
    problems.push_back({path + ".metric", std::move(why), {}, {}});
    return {};
  }
  parseMetricChoice(p.text("metric"), p.text("mode"), metric);
  enabled = true;
  return p;
}

schema::ParamSchema metricSchema(const std::string& def) {
  return {ParamSpec::choice("metric", def, metricNames(),
                            "the epoch metric to watch: val_ or train_ and loss or a figure of "
                            "the task")
              .orOtherNames(),
          ParamSpec::choice("mode", "auto", {"auto", "min", "max"},
                            "auto: min for losses, the figure's better way for the rest")};
}

}  // namespace

std::string MetricChoice::figure() const {
  return name.substr(validation() ? 4 : name.rfind("train_", 0) == 0 ? 6 : 0);
}

bool parseMetricChoice(const std::string& name, const std::string& mode, MetricChoice& out) {
  MetricChoice m;
  m.name = name;
  const bool split = name.rfind("val_", 0) == 0 || name.rfind("train_", 0) == 0;
  if (!split || !schema::isPlainName(name) || m.figure().empty()) return false;
  m.autoMode = mode == "auto";
  m.maximize = m.autoMode ? m.figure() != "loss" : mode == "max";
  out = m;
  return true;
}

const schema::ParamSchema& earlyStoppingSchema() {
  static const schema::ParamSchema kSchema = [] {
    auto s = metricSchema("val_loss");
    s.push_back(ParamSpec::integer("patience", 5, "epochs without improvement").atLeast(1));
    s.push_back(
        ParamSpec::real("min_delta", 0.0, "smallest change that counts as improvement").atLeast(0));
    return s;
  }();
  return kSchema;
}

const schema::ParamSchema& plateauSchema() {
  static const schema::ParamSchema kSchema = [] {
    auto s = metricSchema("val_loss");
    s.push_back(ParamSpec::real("factor", 0.1, "multiply the LR by this on a plateau")
                    .above(0)
                    .atMost(0.999));
    s.push_back(ParamSpec::integer("patience", 2, "epochs without improvement").atLeast(0));
    s.push_back(ParamSpec::real("threshold", 1e-4, "relative improvement that counts").atLeast(0));
    s.push_back(ParamSpec::integer("cooldown", 0, "epochs to wait after a cut").atLeast(0));
    s.push_back(ParamSpec::real("min_lr", 0.0, "lower bound for the LR").atLeast(0));
    return s;
  }();
  return kSchema;
}

const schema::ParamSchema& trainSchema() {
  static const schema::ParamSchema kSchema = {
      ParamSpec::integer("threads", 0, "intra-op compute threads (0: the cores the loader leaves)")
          .atLeast(0)
          .atMost(4096),
      ParamSpec::integer("workers", 0, "data loader threads (0: automatic)").atLeast(0).atMost(64),
      ParamSpec::boolean(
          "deterministic", false,
          "deterministic algorithms and fixed threads: repeatable to the bit on CPU"),
      ParamSpec::integer("local_processes", 1,
                         "data-parallel processes started on this machine (torch.distributed: "
                         "Gloo on CPU, NCCL on CUDA); batch_size is per process. Under torchrun "
                         "or srun the launcher decides: leave 1")
          .atLeast(1)
          .atMost(256),
      ParamSpec::choice("dist_backend", "auto", {"auto", "gloo", "nccl"},
                        "collective backend: auto picks NCCL on CUDA, Gloo on CPU"),
      ParamSpec::real("dist_timeout", 60.0,
                      "seconds to wait for another process before stopping with an error")
          .atLeast(1)
          .atMost(86400),
      ParamSpec::real("dist_bucket_mb", 25.0,
                      "gradient all-reduce bucket size in MB (a bucket starts as soon as it "
                      "is ready)")
          .atLeast(0.001)
          .atMost(4096),
      ParamSpec::boolean("sync_batchnorm", false,
                         "BatchNorm statistics over all processes' batches (else per process)"),
      ParamSpec::integer("grad_accumulation", 1, "batches per optimizer step")
          .atLeast(1)
          .atMost(4096),
      ParamSpec::real("clip_grad_norm", 0.0, "clip the global gradient L2 norm to this (0: off)")
          .atLeast(0),
      ParamSpec::real("clip_grad_value", 0.0, "clip each gradient element to +-this (0: off)")
          .atLeast(0),
      ParamSpec::choice(
          "loss", "auto",
          {"auto", "cross_entropy", "bce", "focal", "mse", "l1", "huber", "dice", "ce_dice",
           "fcos"},
          "the task's loss; auto: its default (classification cross_entropy, "
          "multilabel bce or focal, regression mse, l1 or huber, segmentation "
          "cross_entropy, dice or ce_dice, detection fcos: focal + GIoU + centre-ness)"),
      ParamSpec::real("label_smoothing", 0.0, "cross-entropy label smoothing")
          .atLeast(0)
          .atMost(0.999),
      ParamSpec::choice("amp", "off", {"off", "bf16", "fp16"},
                        "mixed precision: bf16 (CPU or CUDA) or fp16 with loss scaling (CUDA)"),
      ParamSpec::boolean("channels_last", false, "channels-last memory format"),
      ParamSpec::boolean("replace_head", false,
                         "give the last Linear one output per class of the data, with new "
                         "weights (fine-tuning an imported model)"),
      ParamSpec::choice("frozen_batchnorm", "eval", {"eval", "train"},
                        "BatchNorm of frozen nodes: keep its statistics (eval) or update them "
                        "from the fine-tuning batches (train)"),
      ParamSpec::choice("nan_policy", "stop", {"stop", "skip"},
                        "on a non-finite loss or gradient: stop the run, or skip the batch"),
      ParamSpec::boolean("drop_last", false, "drop a last, smaller training batch"),
      ParamSpec::choice("sampler", "shuffle", {"shuffle", "balanced"},
                        "the training order: each sample once per epoch in a new order "
                        "(shuffle), or drawn with each class equally likely (balanced; tasks "
                        "whose samples have one class)"),
      ParamSpec::integer("overfit_batches", 0, "train and validate on the first K batches only")
          .atLeast(0),
      ParamSpec::boolean("fast_dev_run", false,
                         "one training and one validation batch, then stop (a smoke test)"),
      ParamSpec::boolean("eval_test", true, "evaluate the test split when training ends"),
      ParamSpec::choice("monitor", "val_accuracy", metricNames(),
                        "the metric that picks the best checkpoint: val_ or train_ and loss or a "
                        "figure of the task")
          .orOtherNames(),
      ParamSpec::choice("monitor_mode", "auto", {"auto", "min", "max"},
                        "auto: min for losses, the figure's better way for the rest"),
      ParamSpec::integer("checkpoint_every", 0, "also keep a checkpoint every N epochs (0: never)")
          .atLeast(0),
      ParamSpec::integer("keep_checkpoints", 3, "how many every-N-epochs checkpoints to keep")
          .atLeast(1),
  };
  return kSchema;
}

const schema::ParamSchema& optimizerSchema(const std::string& type) {
  const auto it = schemas().find(type);
  if (it == schemas().end()) throw Error("unknown optimizer \"" + type + "\"");
  return it->second;
}

std::vector<std::string> optimizerTypes() {
  return {"sgd", "adam", "adamw", "rmsprop", "adagrad"};
}

namespace {

void readBasics(const Json& train, TrainOptions& o, Problems& problems) {
  auto readInt = [&](const char* key, std::int64_t min, std::int64_t max, std::int64_t& out) {
    if (!train.contains(key)) return;
    const Json& v = train[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      problems.push_back({std::string("train.") + key,
                          "must be a whole number between " + std::to_string(min) + " and " +
                              std::to_string(max) + ", got " + jsonBrief(v),
                          {},
                          {}});
      return;
    }
    out = v.get<std::int64_t>();
  };
  readInt("epochs", 1, 100000, o.epochs);
  readInt("batch_size", 1, 1 << 20, o.batchSize);
  std::int64_t seed = 0;
  readInt("seed", 0, std::int64_t(1) << 62, seed);
  o.seed = static_cast<std::uint64_t>(seed);
}

void readOptimizer(const Json& train, TrainOptions& o, Problems& problems) {
  Json opt = train.contains("optimizer") ? train["optimizer"] : Json::object();
  if (opt.is_string()) opt = Json{{"type", opt}};
  if (!opt.is_object()) {
    problems.push_back(
        {"train.optimizer", "must be an object {\"type\": \"adam\", \"lr\": 0.001}", {}, {}});
  } else {
    if (opt.contains("type") && !opt["type"].is_string()) {
      problems.push_back(
          {"train.optimizer.type",
           "must be the optimizer's name (sgd, adam, adamw, rmsprop, adagrad), got " +
               jsonBrief(opt["type"]),
           {},
           {}});
      return;
    }
    std::string type = opt.contains("type") ? opt["type"].get<std::string>() : "adam";
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (!schemas().count(type)) {
      const auto guess = schema::closestName(type, optimizerTypes());
      problems.push_back(
          {"train.optimizer.type",
           "unknown optimizer \"" + type + "\"; known: sgd, adam, adamw, rmsprop, adagrad",
           {},
           guess.empty() ? std::string() : "did you mean \"" + guess + "\"?"});
    } else {
      o.optimizer.type = type;
      Json params = opt;
      params.erase("type");
      const std::size_t before = problems.size();
      o.optimizer.params =
          schema::resolveParamsAt(optimizerSchema(type), params, "train.optimizer", problems);
      if (problems.size() == before && type == "sgd" && o.optimizer.params.flag("nesterov") &&
          (o.optimizer.params.real("momentum") <= 0 || o.optimizer.params.real("dampening") != 0)) {
        problems.push_back(
            {"train.optimizer.nesterov", "needs momentum > 0 and dampening 0", {}, {}});
      }
    }
  }
}

void readScalars(const Json& train, TrainOptions& o, Problems& problems) {
  // Everything else: scalar keys against trainSchema(), then the sections with their own shape.
  static const std::vector<std::string> kSections{
      "epochs", "batch_size",    "seed",    "optimizer",      "schedule",
      "device", "class_weights", "plateau", "early_stopping", "unfreeze"};
  std::vector<std::string> known = kSections;
  Json scalars = Json::object();
  for (const auto& spec : trainSchema()) {
    known.push_back(spec.name);
    if (train.contains(spec.name)) scalars[spec.name] = train[spec.name];
  }
  schema::reportUnknownKeys(train, known, "train", problems);
  const std::size_t before = problems.size();
  const auto p = schema::resolveParamsAt(trainSchema(), scalars, "train", problems);
  if (problems.size() == before) {
    o.threads = static_cast<int>(p.integer("threads"));
    o.workers = static_cast<int>(p.integer("workers"));
    o.deterministic = p.flag("deterministic");
    o.processes = static_cast<int>(p.integer("local_processes"));
    o.distBackend = p.text("dist_backend");
    o.distTimeout = p.real("dist_timeout");
    o.distBucketMb = p.real("dist_bucket_mb");
    o.syncBatchNorm = p.flag("sync_batchnorm");
    o.gradAccumulation = p.integer("grad_accumulation");
    o.clipGradNorm = p.real("clip_grad_norm");
    o.clipGradValue = p.real("clip_grad_value");
    o.labelSmoothing = p.real("label_smoothing");
    o.loss = p.text("loss") == "auto" ? std::string() : p.text("loss");
    o.amp = p.text("amp");
    o.channelsLast = p.flag("channels_last");
    o.frozenBatchNormEval = p.text("frozen_batchnorm") == "eval";
    o.replaceHead = p.flag("replace_head");
    o.nanPolicy = p.text("nan_policy");
    o.dropLast = p.flag("drop_last");
    o.balancedSampler = p.text("sampler") == "balanced";
    o.overfitBatches = p.integer("overfit_batches");
    o.fastDevRun = p.flag("fast_dev_run");
    o.evalTest = p.flag("eval_test");
    o.monitorGiven = train.contains("monitor");
    if (auto why = metricProblem(p.text("monitor")); !why.empty())
      problems.push_back({"train.monitor", std::move(why), {}, {}});
    else
      parseMetricChoice(p.text("monitor"), p.text("monitor_mode"), o.monitor);
    o.checkpointEvery = p.integer("checkpoint_every");
    o.keepCheckpoints = p.integer("keep_checkpoints");
  }
}

void readDevice(const Json& train, TrainOptions& o, Problems& problems) {
  if (train.contains("device")) {
    const Json& d = train["device"];
    const std::string s = d.is_string() ? d.get<std::string>() : std::string();
    bool ok = s == "cpu" || s == "cuda";
    if (!ok && s.rfind("cuda:", 0) == 0 && s.size() > 5)
      ok = std::all_of(s.begin() + 5, s.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!ok) {
      problems.push_back(
          {"train.device", "must be \"cpu\", \"cuda\" or \"cuda:N\", got " + jsonBrief(d), {}, {}});
    } else {
      o.device = s;
    }
  }
}

void readClassWeights(const Json& train, TrainOptions& o, Problems& problems) {
  if (train.contains("class_weights")) {
    const Json& w = train["class_weights"];
    if (w.is_string() && (w == "none" || w == "auto")) {
      o.classWeights = w.get<std::string>();
    } else if (w.is_array() && !w.empty() && std::all_of(w.begin(), w.end(), [](const Json& v) {
                 return v.is_number() && v.get<double>() >= 0 && std::isfinite(v.get<double>());
               })) {
      o.classWeights = "explicit";
      for (const auto& v : w)
        o.classWeightValues.push_back(v.get<double>());
    } else {
      problems.push_back({"train.class_weights",
                          "must be \"none\", \"auto\" or a list of non-negative numbers, one per "
                          "class; got " +
                              jsonBrief(w),
                          {},
                          {}});
    }
  }
}

// train.unfreeze: [{"epoch": 3, "from": "layer4_0_conv1"}, {"epoch": 5}]
void readUnfreeze(const Json& train, TrainOptions& o, Problems& problems) {
  if (!train.contains("unfreeze")) return;
  const Json& list = train["unfreeze"];
  if (!list.is_array() || list.size() > 1000) {
    problems.push_back(
        {"train.unfreeze",
         "must be a list of {\"epoch\": N, \"from\": \"node\"} steps, got " + jsonBrief(list),
         {},
         {}});
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "train.unfreeze[" + std::to_string(i) + "]";
    const Json& e = list[i];
    if (!e.is_object()) {
      problems.push_back(
          {at, "must be an object like {\"epoch\": 3, \"from\": \"conv4\"}", {}, {}});
      continue;
    }
    schema::reportUnknownKeys(e, {"epoch", "from"}, at, problems);
    UnfreezeStep step;
    if (!e.contains("epoch") || !e["epoch"].is_number_integer() ||
        e["epoch"].get<std::int64_t>() < 1 || e["epoch"].get<std::int64_t>() > 1000000) {
      problems.push_back({at + ".epoch",
                          "must be a whole number >= 1 (the epoch, counted from 0, at whose start "
                          "the nodes unfreeze)",
                          {},
                          {}});
      continue;
    }
    step.epoch = e["epoch"].get<std::int64_t>();
    if (e.contains("from")) {
      if (!e["from"].is_string()) {
        problems.push_back({at + ".from", "must be a node id", {}, {}});
        continue;
      }
      step.from = e["from"].get<std::string>();
    }
    o.unfreeze.push_back(step);
  }
  std::stable_sort(o.unfreeze.begin(), o.unfreeze.end(),
                   [](const UnfreezeStep& a, const UnfreezeStep& b) { return a.epoch < b.epoch; });
}

void readMetricSections(const Json& train, TrainOptions& o, Problems& problems) {
  const auto es = readMetricSection(train, "early_stopping", earlyStoppingSchema(),
                                    o.earlyStopping.metric, o.earlyStopping.enabled, problems);
  if (o.earlyStopping.enabled) {
    o.earlyStopping.patience = es.integer("patience");
    o.earlyStopping.minDelta = es.real("min_delta");
  }

  const auto pl = readMetricSection(train, "plateau", plateauSchema(), o.plateau.metric,
                                    o.plateau.enabled, problems);
  if (o.plateau.enabled) {
    auto& c = o.plateau.controller;
    c.maximize = o.plateau.metric.maximize;
    c.factor = pl.real("factor");
    c.patience = pl.integer("patience");
    c.threshold = pl.real("threshold");
    c.cooldown = pl.integer("cooldown");
    c.minLr = pl.real("min_lr");
  }
}

}  // namespace

TrainOptions parseTrainOptions(const Json& train, const ScheduleRegistry& schedules,
                               Problems& problems) {
  TrainOptions o;
  if (!train.is_object()) {
    problems.push_back({"train", "must be an object", {}, {}});
    return o;
  }
  readBasics(train, o, problems);
  readOptimizer(train, o, problems);
  const double lr = o.optimizer.params.has("lr") ? o.optimizer.lr() : 0.001;
  o.schedule = LrSchedule::fromJson(train.contains("schedule") ? train["schedule"] : Json(), lr,
                                    schedules, problems);
  readScalars(train, o, problems);
  readDevice(train, o, problems);
  readClassWeights(train, o, problems);
  readUnfreeze(train, o, problems);
  readMetricSections(train, o, problems);
  return o;
}

}  // namespace netsmith::train
