#include "train/train_options.h"

#include <algorithm>
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

}  // namespace

const schema::ParamSchema& optimizerSchema(const std::string& type) {
  const auto it = schemas().find(type);
  if (it == schemas().end()) throw Error("unknown optimizer \"" + type + "\"");
  return it->second;
}

std::vector<std::string> optimizerTypes() {
  return {"sgd", "adam", "adamw", "rmsprop", "adagrad"};
}

TrainOptions parseTrainOptions(const Json& train, const ScheduleRegistry& schedules,
                               Problems& problems) {
  TrainOptions o;
  if (!train.is_object()) {
    problems.push_back({"train", "must be an object", {}, {}});
    return o;
  }
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

  Json opt = train.contains("optimizer") ? train["optimizer"] : Json::object();
  if (opt.is_string()) opt = Json{{"type", opt}};
  if (!opt.is_object()) {
    problems.push_back(
        {"train.optimizer", "must be an object {\"type\": \"adam\", \"lr\": 0.001}", {}, {}});
  } else {
    std::string type =
        opt.contains("type") && opt["type"].is_string() ? opt["type"].get<std::string>() : "adam";
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
  const double lr = o.optimizer.params.has("lr") ? o.optimizer.lr() : 0.001;
  o.schedule = LrSchedule::fromJson(train.contains("schedule") ? train["schedule"] : Json(), lr,
                                    schedules, problems);
  return o;
}

}  // namespace netsmith::train
