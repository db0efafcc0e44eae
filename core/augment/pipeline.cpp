#include "augment/pipeline.h"

#include <sstream>

namespace netsmith::augment {

namespace {

/// An augment entry's keys besides "transform": its chance, whether it is on, its parameters.
struct AugmentEntryKeys {
  double probability = 1.0;
  bool enabled = true;
  bool ok = true;  ///< false: a bad "p" or "enabled" was reported
  Json params = Json::object();
};

/// The registered transform an augment entry names, or null after reporting a malformed entry
/// or an unknown name.
const TransformDef* augmentEntryTransform(const Json& entry, const std::string& path,
                                          const TransformRegistry& registry, Problems& problems) {
  if (!entry.is_object() || !entry.contains("transform") || !entry["transform"].is_string()) {
    problems.push_back(
        {path,
         "must be an object with a \"transform\" name, e.g. {\"transform\": \"HorizontalFlip\"}",
         {},
         {}});
    return nullptr;
  }
  const std::string name = entry["transform"].get<std::string>();
  const TransformDef* def = registry.find(name);
  if (!def) {
    const auto guess = schema::closestName(name, registry.names());
    problems.push_back(
        {path + ".transform",
         "unknown transform \"" + name + "\"",
         {},
         guess.empty() ? "see `netsmith-cli transforms`" : "did you mean \"" + guess + "\"?"});
    return nullptr;
  }
  return def;
}

/// Reads an entry's "p" and "enabled" (reporting bad values) and gathers its other keys, but
/// "transform", as the transform's parameters.
AugmentEntryKeys readAugmentEntryKeys(const Json& entry, const std::string& path,
                                      double defaultProbability, Problems& problems) {
  AugmentEntryKeys keys;
  keys.probability = defaultProbability;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() == "transform") continue;
    if (it.key() == "p") {
      const Json& v = it.value();
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
        problems.push_back(
            {path + ".p", "must be a probability in [0, 1], got " + jsonBrief(v), {}, {}});
        keys.ok = false;
      } else {
        keys.probability = v.get<double>();
      }
    } else if (it.key() == "enabled") {
      if (!it.value().is_boolean()) {
        problems.push_back({path + ".enabled", "must be true or false", {}, {}});
        keys.ok = false;
      } else {
        keys.enabled = it.value().get<bool>();
      }
    } else {
      keys.params[it.key()] = it.value();
    }
  }
  return keys;
}

/// Whether the transform's resolved parameters pass its own check in `context` and, with pixel
/// targets, it moves them with the image; reports why not.
bool augmentStepAllowed(const TransformDef& def, const std::string& name,
                        const schema::Params& resolved, const TransformContext& context,
                        const std::string& path, Problems& problems) {
  if (def.check) {
    const auto issues = def.check(resolved, context);
    for (const auto& issue : issues)
      problems.push_back({path + "." + issue.param, issue.message, {}, {}});
    if (!issues.empty()) return false;
  }
  if (context.pixelTargets && def.targets == TargetEffect::Breaks) {
    problems.push_back({path + ".transform",
                        name + " moves or mixes pixels but cannot move a mask or boxes with them",
                        {},
                        "use the Geometry transforms (flips, crops, rotation, affine), which "
                        "move the mask or boxes with the image"});
    return false;
  }
  return true;
}

/// The batch-level mix (MixUp, CutMix or Mosaic) of transform `name`.
BatchMix augmentBatchMix(const std::string& name, const schema::Params& resolved,
                         double probability) {
  BatchMix mix;
  mix.kind = name == "CutMix"   ? BatchMix::Kind::CutMix
             : name == "Mosaic" ? BatchMix::Kind::Mosaic
                                : BatchMix::Kind::MixUp;
  if (mix.kind != BatchMix::Kind::Mosaic) mix.alpha = resolved.real("alpha");
  mix.probability = probability;
  return mix;
}

}  // namespace

Pipeline Pipeline::fromJson(const Json& augment, const TransformRegistry& registry,
                            const TransformContext& context, Problems& problems) {
  Pipeline p;
  if (augment.is_null()) return p;
  if (!augment.is_array()) {
    problems.push_back({"augment", "must be a list of transforms", {}, {}});
    return p;
  }
  for (std::size_t i = 0; i < augment.size(); ++i) {
    const std::string path = "augment[" + std::to_string(i) + "]";
    const Json& entry = augment[i];
    const TransformDef* def = augmentEntryTransform(entry, path, registry, problems);
    if (!def) continue;
    const std::string name = entry["transform"].get<std::string>();
    const AugmentEntryKeys keys =
        readAugmentEntryKeys(entry, path, def->defaultProbability, problems);
    bool ok = keys.ok;
    const std::size_t before = problems.size();
    const auto resolved = schema::resolveParamsAt(def->schema, keys.params, path, problems);
    if (problems.size() != before) ok = false;
    if (!ok) continue;
    if (!augmentStepAllowed(*def, name, resolved, context, path, problems)) continue;
    if (!keys.enabled) continue;
    if (def->batchLevel) {
      p.m_mixes.push_back(augmentBatchMix(name, resolved, keys.probability));
      continue;
    }
    Step step;
    step.name = name;
    step.probability = keys.probability;
    step.deterministic = def->deterministic;
    step.setsSize = def->setsSize;
    step.isNormalize = name == "Normalize";
    step.anyDepth = def->anyDepth;
    step.transform = def->build(resolved, context);
    p.m_steps.push_back(std::move(step));
  }
  return p;
}

namespace {

/// One step as apply() runs it: evaluation runs deterministic steps only, always; training
/// draws the step's chance first, even when p == 1, so that later steps see the same random
/// stream whatever the probabilities of earlier ones are set to.
template <typename Step>
void runStep(const Step& step, cv::Mat& image, SampleRng* rng, PixelTarget* target = nullptr) {
  const auto run = [&](SampleRng& r) {
    if (target)
      step.transform->applyWithTarget(image, *target, r);
    else
      step.transform->apply(image, r);
  };
  if (!rng) {
    if (!step.deterministic) return;
    SampleRng unused(0);
    run(unused);
    return;
  }
  const bool fire = rng->uniform(0.0, 1.0) < step.probability;
  if (fire) run(*rng);
}

}  // namespace

void Pipeline::apply(cv::Mat& image, SampleRng* rng, bool stopBeforeNormalize,
                     std::size_t from) const {
  for (std::size_t i = from; i < m_steps.size(); ++i) {
    if (stopBeforeNormalize && m_steps[i].isNormalize) break;
    runStep(m_steps[i], image, rng);
  }
}

void Pipeline::applyWithTarget(cv::Mat& image, PixelTarget& target, SampleRng* rng,
                               bool stopBeforeNormalize) const {
  const auto size = [](const cv::Mat& m) {
    return std::to_string(m.cols) + "x" + std::to_string(m.rows);
  };
  const bool masked = !target.mask.empty();  // boxes alone carry no mask
  if (masked && (target.mask.size() != image.size() || target.mask.type() != CV_8UC1))
    throw Error(
        "augment: a mask must be one byte per pixel (8-bit, one channel) at the image's "
        "size (" +
        size(image) + "), got " + size(target.mask) +
        (target.mask.type() == CV_8UC1 ? std::string() : " of another type"));
  for (std::size_t i = 0; i < m_steps.size(); ++i) {
    const auto& step = m_steps[i];
    if (stopBeforeNormalize && step.isNormalize) break;
    runStep(step, image, rng, &target);
    // A transform that changes the size without moving the mask (its TransformDef says
    // `targets` None by mistake) is named, not trained out of step.
    if (masked && target.mask.size() != image.size())
      throw Error("augment[" + std::to_string(i) + "]: " + step.name + " made the image " +
                  size(image) + " but left the mask " + size(target.mask));
  }
}

std::size_t Pipeline::applyLeading(cv::Mat& image, SampleRng* rng) const {
  return applyLeadingFrom(image, rng, 0);
}

std::size_t Pipeline::applyLeadingFrom(cv::Mat& image, SampleRng* rng, std::size_t start) const {
  std::size_t i = start;
  for (; i < m_steps.size(); ++i) {
    const auto& step = m_steps[i];
    if (!rng && !step.deterministic) continue;  // not run in evaluation at all
    if (!step.anyDepth) break;
    runStep(step, image, rng);
  }
  return i;
}

std::size_t Pipeline::firstRunning(bool training) const {
  std::size_t i = 0;
  while (!training && i < m_steps.size() && !m_steps[i].deterministic)
    ++i;
  return i;
}

bool Pipeline::startsWithCut(bool training) const {
  const std::size_t i = firstRunning(training);
  return i < m_steps.size() && m_steps[i].anyDepth && m_steps[i].transform->cutsRegion();
}

Pipeline::LeadingCut Pipeline::drawLeadingCut(cv::Size size, SampleRng* rng) const {
  LeadingCut cut;
  const std::size_t i = firstRunning(rng != nullptr);
  if (i >= m_steps.size()) return cut;
  const auto& step = m_steps[i];
  SampleRng unused(0);
  cut.fired = !rng || rng->uniform(0.0, 1.0) < step.probability;  // as runStep draws
  if (cut.fired) cut.region = step.transform->regionOf(size, rng ? *rng : unused);
  return cut;
}

std::size_t Pipeline::applyLeading(cv::Mat& region, SampleRng* rng, const LeadingCut& cut) const {
  const std::size_t i = firstRunning(rng != nullptr);
  if (i >= m_steps.size()) return i;
  SampleRng unused(0);
  if (cut.fired) m_steps[i].transform->finishCut(region, rng ? *rng : unused);
  return applyLeadingFrom(region, rng, i + 1);
}

bool Pipeline::setsSize(bool training) const {
  for (const auto& s : m_steps) {
    if (s.setsSize && (training || s.deterministic)) return true;
  }
  return false;
}

bool Pipeline::hasNormalize() const {
  for (const auto& s : m_steps) {
    if (s.isNormalize) return true;
  }
  return false;
}

std::string Pipeline::describe() const {
  std::ostringstream os;
  bool first = true;
  for (const auto& s : m_steps) {
    os << (first ? "" : ", ") << s.name;
    if (s.probability < 1.0) os << "(p=" << s.probability << ")";
    first = false;
  }
  for (const auto& m : m_mixes) {
    os << (first ? "" : ", ")
       << (m.kind == BatchMix::Kind::MixUp    ? "MixUp"
           : m.kind == BatchMix::Kind::CutMix ? "CutMix"
                                              : "Mosaic");
    if (m.kind == BatchMix::Kind::Mosaic)
      os << "(p=" << m.probability << ")";
    else
      os << "(alpha=" << m.alpha << ")";
    first = false;
  }
  return first ? std::string("none") : os.str();
}

}  // namespace netsmith::augment
