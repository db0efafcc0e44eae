#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace netsmith::train {

namespace {

using schema::Params;
using schema::ParamSpec;
constexpr double kPi = 3.14159265358979323846;

double epochOf(std::int64_t step, const StepSpan& plan) {
  return static_cast<double>(step / std::max<std::int64_t>(1, plan.stepsPerEpoch));
}

double cosineBetween(double hi, double lo, double t) {
  return lo + (hi - lo) * 0.5 * (1.0 + std::cos(kPi * t));
}

}  // namespace

schema::ParamSchema warmupSchema() {
  return {
      ParamSpec::real("warmup_epochs", 0.0, "linear warmup length in epochs (fractions allowed)")
          .atLeast(0)
          .atMost(1000),
      ParamSpec::integer("warmup_steps", 0,
                         "linear warmup length in steps (used when warmup_epochs is 0)")
          .atLeast(0),
      ParamSpec::real("warmup_start_factor", 0.1,
                      "LR at the start of warmup, as a fraction of the scheduled LR")
          .atLeast(0)
          .atMost(1)};
}

namespace {

/// constant, step, multistep, exponential.
void addStepSchedules(ScheduleRegistry& r) {
  r.add({"constant",
         "the base LR throughout",
         {},
         [](const Params&, double lr, std::int64_t, const StepSpan&) { return lr; }});
  r.add({"step",
         "multiply the LR by gamma every step_size epochs",
         {ParamSpec::integer("step_size", 10, "epochs between decays").atLeast(1),
          ParamSpec::real("gamma", 0.1, "decay factor").above(0).atMost(1)},
         [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
           return lr * std::pow(p.real("gamma"),
                                std::floor(epochOf(step, plan) / double(p.integer("step_size"))));
         }});
  r.add({"multistep",
         "multiply the LR by gamma at each milestone epoch",
         {ParamSpec::floatList("milestones", Json::array({30, 60, 90}),
                               "epochs at which the LR decays")
              .atLeast(1),
          ParamSpec::real("gamma", 0.1, "decay factor").above(0).atMost(1)},
         [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
           const double epoch = epochOf(step, plan);
           int passed = 0;
           for (double m : p.list("milestones"))
             passed += epoch >= m ? 1 : 0;
           return lr * std::pow(p.real("gamma"), passed);
         }});
  r.add({"exponential",
         "multiply the LR by gamma every epoch",
         {ParamSpec::real("gamma", 0.95, "decay factor per epoch").above(0).atMost(1)},
         [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
           return lr * std::pow(p.real("gamma"), epochOf(step, plan));
         }});
}

/// cosine (with restarts), one-cycle, polynomial.
void addAnnealingSchedules(ScheduleRegistry& r) {
  r.add({"cosine",
         "cosine decay from the base LR to min_lr over the run; optional warm restarts",
         {ParamSpec::real("min_lr", 0.0, "the LR at the end of each cosine cycle").atLeast(0),
          ParamSpec::real("restart_epochs", 0.0,
                          "length of the first cycle in epochs (0: one cycle, no restarts)")
              .atLeast(0),
          ParamSpec::real("restart_mult", 1.0, "each cycle is this many times longer than the last")
              .atLeast(1)
              .atMost(10)},
         [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
           const double minLr = p.real("min_lr");
           const double s = double(step);
           const double cycle0 = p.real("restart_epochs") * double(plan.stepsPerEpoch);
           if (cycle0 <= 0) {
             const double total = double(std::max<std::int64_t>(1, plan.totalSteps()));
             return cosineBetween(lr, minLr, std::min(1.0, s / total));
           }
           // SGDR: cycles of length cycle0 * mult^i.
           double start = 0, length = cycle0;
           const double mult = p.real("restart_mult");
           while (s >= start + length) {
             start += length;
             length *= mult;
           }
           return cosineBetween(lr, minLr, (s - start) / length);
         }});
  r.add(
      {"one_cycle",
       "rise from max_lr/div_factor to max_lr, then anneal to max_lr/(div_factor*final_div_factor)",
       {ParamSpec::real("max_lr", "auto", "peak LR; \"auto\" uses the optimizer's lr")
            .above(0)
            .orKeywords({"auto"}),
        ParamSpec::real("pct_start", 0.3, "fraction of the run spent rising").above(0).atMost(0.99),
        ParamSpec::real("div_factor", 25.0, "initial LR = max_lr / div_factor").atLeast(1),
        ParamSpec::real("final_div_factor", 1e4, "final LR = initial LR / final_div_factor")
            .atLeast(1),
        ParamSpec::choice("anneal", "cos", {"cos", "linear"}, "the shape of both phases")},
       [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
         const double maxLr = p.isAuto("max_lr") ? lr : p.real("max_lr");
         const double initial = maxLr / p.real("div_factor");
         const double final = initial / p.real("final_div_factor");
         const double last = double(std::max<std::int64_t>(1, plan.totalSteps() - 1));
         const double up = p.real("pct_start") * double(plan.totalSteps()) - 1.0;
         const bool cos = p.text("anneal") == "cos";
         auto anneal = [cos](double from, double to, double t) {
           return cos ? cosineBetween(from, to, t) : from + (to - from) * t;
         };
         // torch.optim.lr_scheduler.OneCycleLR (three_phase = False).
         const double s = double(step);
         if (s <= up) return anneal(initial, maxLr, up > 0 ? s / up : 1.0);
         return anneal(maxLr, final, std::min(1.0, (s - up) / std::max(1.0, last - up)));
       }});
  r.add({"polynomial",
         "decay from the base LR to end_lr as (1 - t)^power over the run",
         {ParamSpec::real("power", 1.0, "1 is linear").above(0).atMost(10),
          ParamSpec::real("end_lr", 0.0, "the LR at the last step").atLeast(0)},
         [](const Params& p, double lr, std::int64_t step, const StepSpan& plan) {
           const double t =
               std::min(1.0, double(step) / double(std::max<std::int64_t>(1, plan.totalSteps())));
           return p.real("end_lr") + (lr - p.real("end_lr")) * std::pow(1.0 - t, p.real("power"));
         }});
}

}  // namespace

ScheduleRegistry ScheduleRegistry::withBuiltins() {
  ScheduleRegistry r;
  addStepSchedules(r);
  addAnnealingSchedules(r);
  return r;
}

LrSchedule LrSchedule::fromJson(const Json& json, double baseLr, const ScheduleRegistry& registry,
                                Problems& problems) {
  LrSchedule s;
  s.m_baseLr = baseLr;
  s.m_def = *registry.find("constant");
  if (json.is_null()) return s;
  const std::string path = "train.schedule";
  Json given = json.is_string() ? Json{{"type", json}} : json;
  if (!given.is_object()) {
    problems.push_back(
        {path, "must be an object {\"type\": \"cosine\", ...} or a schedule name", {}, {}});
    return s;
  }
  const std::string type =
      given.contains("type") && given["type"].is_string() ? given["type"].get<std::string>() : "";
  const ScheduleDef* def = registry.find(type);
  if (!def) {
    std::string known;
    for (const auto& n : registry.names())
      known += (known.empty() ? "" : ", ") + n;
    const auto guess = schema::closestName(type, registry.names());
    problems.push_back(
        {path + ".type",
         (type.empty() ? std::string("missing") : "unknown schedule \"" + type + "\"") +
             "; known: " + known,
         {},
         guess.empty() ? std::string() : "did you mean \"" + guess + "\"?"});
    return s;
  }
  given.erase("type");
  auto schemaWithWarmup = def->schema;
  const auto warm = warmupSchema();
  schemaWithWarmup.insert(schemaWithWarmup.end(), warm.begin(), warm.end());
  const std::size_t before = problems.size();
  const auto params = schema::resolveParamsAt(schemaWithWarmup, given, path, problems);
  if (problems.size() != before) return s;
  s.m_type = type;
  s.m_def = *def;
  s.m_params = params;
  s.m_warmupEpochs = params.real("warmup_epochs");
  s.m_warmupSteps = params.integer("warmup_steps");
  s.m_warmupStartFactor = params.real("warmup_start_factor");
  return s;
}

double LrSchedule::warmupSteps(const StepSpan& plan) const {
  return m_warmupEpochs > 0 ? m_warmupEpochs * double(plan.stepsPerEpoch) : double(m_warmupSteps);
}

double LrSchedule::lrAt(std::int64_t step, const StepSpan& plan) const {
  const double warmup = warmupSteps(plan);
  // The schedule proper starts where the warmup ends (the first whole step at or after it).
  const auto start = static_cast<std::int64_t>(std::ceil(warmup));
  StepSpan rest = plan;
  rest.lessSteps += start;
  const auto scheduled = [&](std::int64_t s) {
    return m_def.lrAt ? m_def.lrAt(m_params, m_baseLr, s, rest) : m_baseLr;
  };
  if (warmup > 0 && double(step) < warmup) {
    const double t = double(step) / warmup;
    return scheduled(0) * (m_warmupStartFactor + (1.0 - m_warmupStartFactor) * t);
  }
  return scheduled(step - start);
}

std::vector<double> LrSchedule::curve(const StepSpan& plan) const {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(plan.totalSteps()));
  for (std::int64_t s = 0; s < plan.totalSteps(); ++s)
    out.push_back(lrAt(s, plan));
  return out;
}

double PlateauController::update(double metric, double currentLr) {
  const double rel = m_options.threshold;
  const bool better = !m_hasBest || (m_options.maximize ? metric > m_best * (1.0 + rel)
                                                        : metric < m_best * (1.0 - rel));
  if (better) {
    m_best = metric;
    m_hasBest = true;
    m_badEpochs = 0;
  } else {
    ++m_badEpochs;
  }
  if (m_cooldownLeft > 0) {
    --m_cooldownLeft;
    m_badEpochs = 0;
  }
  if (m_badEpochs > m_options.patience) {
    m_cooldownLeft = m_options.cooldown;
    m_badEpochs = 0;
    return std::max(m_options.minLr, currentLr * m_options.factor);
  }
  return currentLr;
}

Json PlateauController::state() const {
  return Json{{"has_best", m_hasBest},
              {"best", m_best},
              {"bad_epochs", m_badEpochs},
              {"cooldown_left", m_cooldownLeft}};
}

void PlateauController::restore(const Json& state) {
  m_hasBest = state.at("has_best").get<bool>();
  m_best = state.at("best").get<double>();
  m_badEpochs = state.at("bad_epochs").get<std::int64_t>();
  m_cooldownLeft = state.at("cooldown_left").get<std::int64_t>();
}

}  // namespace netsmith::train
