#include "run/events.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace netsmith::run {

std::string eventTypeName(EventType type) {
  switch (type) {
    case EventType::Started:
      return "started";
    case EventType::BatchEnd:
      return "batch_end";
    case EventType::EpochEnd:
      return "epoch_end";
    case EventType::Checkpoint:
      return "checkpoint";
    case EventType::Log:
      return "log";
    case EventType::Warning:
      return "warning";
    case EventType::Finished:
      return "finished";
  }
  return "log";
}

std::string finishStateName(FinishState state) {
  switch (state) {
    case FinishState::Completed:
      return "completed";
    case FinishState::Stopped:
      return "stopped";
    case FinishState::Failed:
      return "failed";
  }
  return "failed";
}

namespace {
// JSON has no NaN: a missing figure is null.
Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

double numberIn(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>()
                                          : std::numeric_limits<double>::quiet_NaN();
}

std::int64_t countIn(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::map<std::string, double> figuresIn(const Json& j, const char* key) {
  std::map<std::string, double> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [name, v] : it->items())
    out[name] = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  return out;
}
}  // namespace

EpochMetrics epochMetricsFromJson(const Json& event) {
  EpochMetrics e;
  if (!event.is_object()) return e;
  e.epoch = countIn(event, "epoch");
  e.epochs = countIn(event, "epochs");
  e.trainLoss = numberIn(event, "train_loss");
  e.trainAccuracy = numberIn(event, "train_accuracy");
  if (const double s = numberIn(event, "train_label_smoothing"); std::isfinite(s))
    e.trainLabelSmoothing = s;
  e.trainFigures = figuresIn(event, "train_figures");
  e.lr = numberIn(event, "lr");
  e.seconds = numberIn(event, "seconds");
  const auto v = event.find("validation");
  if (v != event.end() && v->is_object()) {
    e.hasValidation = true;
    e.validation.loss = numberIn(*v, "loss");
    e.validation.accuracy = numberIn(*v, "accuracy");
    e.validation.samples = countIn(*v, "samples");
    e.validation.figures = figuresIn(*v, "figures");
  }
  return e;
}

Json evalMetricsToJson(const EvalMetrics& m) {
  Json perClass = Json::array();
  for (double a : m.perClassAccuracy)
    perClass.push_back(number(a));
  Json figures = Json::object();
  for (const auto& [name, v] : m.figures)
    figures[name] = number(v);
  Json j{{"loss", number(m.loss)},         {"accuracy", number(m.accuracy)}, {"samples", m.samples},
         {"per_class_accuracy", perClass}, {"confusion", m.confusion},       {"figures", figures}};
  if (!m.perClass.empty()) {
    Json per = Json::object();
    for (const auto& [name, values] : m.perClass) {
      Json list = Json::array();
      for (double v : values)
        list.push_back(number(v));
      per[name] = list;
    }
    j["per_class_figures"] = per;
  }
  return j;
}

namespace {

/// " accuracy 91.05%" for a task with accuracy (as the batch lines and eval say it); " mae 0.1234
/// rmse 0.2345" for one without.
template <typename Num>
std::string figuresText(double accuracy, const std::map<std::string, double>& figures,
                        const Num& num) {
  // A task without an accuracy (detection trains without figures) prints none, not "accuracy -".
  if (std::isfinite(accuracy)) return " accuracy " + num(100 * accuracy, "%.2f%%");
  std::string text;
  for (const auto& [name, v] : figures)
    text += " " + name + " " + num(v, "%.4g");
  return text;
}

}  // namespace

std::string figuresText(const EvalMetrics& m) {
  if (std::isfinite(m.accuracy)) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f%%", 100.0 * m.accuracy);
    return std::string(" accuracy ") + pct;
  }
  std::string text;
  for (const auto& [name, v] : m.figures) {
    // A figure the data cannot give (mAP of large boxes when there are none) reads "-", as
    // in the epoch lines (null in JSON), never "nan".
    char buf[48];
    if (std::isfinite(v))
      std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), v);
    else
      std::snprintf(buf, sizeof buf, " %s -", name.c_str());
    text += buf;
  }
  return text;
}

std::string describeEpoch(const EpochMetrics& m) {
  auto num = [](double v, const char* format) {
    if (!std::isfinite(v)) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  std::string text =
      "epoch " + std::to_string(m.epoch + 1) + "/" + std::to_string(m.epochs) + ": train loss " +
      num(m.trainLoss, "%.4f") +
      (m.trainLabelSmoothing > 0 ? " (label smoothing " + num(m.trainLabelSmoothing, "%g") + ")"
                                 : std::string()) +
      figuresText(m.trainAccuracy, m.trainFigures, num);
  if (m.hasValidation) {
    text += " | validation loss " + num(m.validation.loss, "%.4f") +
            figuresText(m.validation.accuracy, m.validation.figures, num);
  }
  return text + " | " + num(m.seconds, "%.1f") + " s";
}

namespace {

Json batchJson(const BatchMetrics& b) {
  Json j = Json::object();
  j.update(Json{{"epoch", b.epoch},
                {"batch", b.batch},
                {"batches_per_epoch", b.batchesPerEpoch},
                {"step", b.step},
                {"total_steps", b.totalSteps},
                {"loss", number(b.loss)},
                {"epoch_loss", number(b.epochLoss)},
                {"lr", b.lr},
                {"grad_norm", number(b.gradNorm)},
                {"images_per_second", b.imagesPerSecond},
                {"run_seconds", b.runSeconds},
                {"memory", Json{{"kind", b.memory.kind},
                                {"bytes", b.memory.bytes},
                                {"reserved_bytes", b.memory.reservedBytes},
                                {"peak_bytes", b.memory.peakBytes}}}});
  if (!b.headline.empty()) {
    j[b.headline] = number(b.headlineValue);
    j["epoch_" + b.headline] = number(b.epochHeadlineValue);
  }
  if (b.lossScale > 0) j["loss_scale"] = b.lossScale;
  if (b.skipped) j["skipped"] = true;
  return j;
}

Json epochJson(const EpochMetrics& e) {
  Json j = Json::object();
  j.update(Json{{"epoch", e.epoch},
                {"epochs", e.epochs},
                {"train_loss", number(e.trainLoss)},
                {"train_accuracy", number(e.trainAccuracy)},
                {"lr", e.lr},
                {"seconds", e.seconds}});
  if (e.trainLabelSmoothing > 0) j["train_label_smoothing"] = e.trainLabelSmoothing;
  if (!e.trainFigures.empty()) {
    Json figures = Json::object();
    for (const auto& [name, v] : e.trainFigures)
      figures[name] = number(v);
    j["train_figures"] = figures;
  }
  if (e.hasValidation) j["validation"] = evalMetricsToJson(e.validation);
  Json norms = Json::object();
  for (const auto& [name, v] : e.layerGradNorms)
    norms[name] = number(v);
  j["layer_grad_norms"] = norms;
  return j;
}

}  // namespace

Json TrainingEvent::toJson() const {
  Json j{{"event", eventTypeName(type)}, {"time", time}};
  switch (type) {
    case EventType::Started:
      j["run_dir"] = path;
      j["message"] = message;
      if (!monitor.empty()) j["monitor"] = Json{{"name", monitor}, {"maximize", monitorMaximize}};
      break;
    case EventType::BatchEnd:
      j.update(batchJson(batch));
      break;
    case EventType::EpochEnd:
      j.update(epochJson(epoch));
      break;
    case EventType::Checkpoint:
      j["path"] = path;
      j["tag"] = tag;
      j["epoch"] = epoch.epoch;
      break;
    case EventType::Log:
    case EventType::Warning:
      j["level"] = level;
      j["message"] = message;
      if (!tag.empty()) j["tag"] = tag;                  // "test": the test pass begins
      if (type == EventType::Warning && !tag.empty()) {  // a warning about a step ("divergence")
        j["epoch"] = batch.epoch;
        j["step"] = batch.step;
      }
      break;
    case EventType::Finished:
      j["state"] = finishStateName(state);
      j["reason"] = message;
      j["run_dir"] = path;
      if (hasTest) {
        j["test"] = evalMetricsToJson(test);
        j["test_checkpoint"] = tag;
      }
      break;
  }
  return j;
}

AsyncSink::AsyncSink(std::shared_ptr<EventSink> target, Overflow overflow,
                     std::size_t maxQueuedBatches)
    : m_target(std::move(target)),
      m_overflow(overflow),
      m_maxBatches(std::max<std::size_t>(1, maxQueuedBatches)) {
  m_thread = std::thread([this] { loop(); });
}

AsyncSink::~AsyncSink() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_closing = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void AsyncSink::onEvent(const TrainingEvent& event) {
  {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (event.type == EventType::BatchEnd) {
      if (m_queuedBatches >= m_maxBatches && m_overflow == Overflow::Wait) {
        const auto t0 = std::chrono::steady_clock::now();
        m_roomCv.wait(lock, [&] { return m_queuedBatches < m_maxBatches; });
        m_waitedSeconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } else if (m_queuedBatches >= m_maxBatches) {
        for (auto it = m_queue.begin(); it != m_queue.end(); ++it) {
          if (it->type == EventType::BatchEnd) {
            m_queue.erase(it);
            --m_queuedBatches;
            ++m_dropped;
            ++m_droppedSinceDelivery;
            break;
          }
        }
      }
      ++m_queuedBatches;
    }
    m_queue.push_back(event);
  }
  m_cv.notify_one();
}

void AsyncSink::flush() {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_idleCv.wait(lock, [&] { return m_queue.empty() && !m_busy; });
}

std::int64_t AsyncSink::droppedBatchEvents() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_dropped;
}

double AsyncSink::waitedSeconds() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_waitedSeconds;
}

void AsyncSink::loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_cv.wait(lock, [&] { return m_closing || !m_queue.empty(); });
    if (m_queue.empty()) {
      if (m_closing) return;
      continue;
    }
    TrainingEvent event = std::move(m_queue.front());
    m_queue.pop_front();
    if (event.type == EventType::BatchEnd) {
      --m_queuedBatches;
      event.batch.skippedBefore = m_droppedSinceDelivery;
      m_droppedSinceDelivery = 0;
      m_roomCv.notify_one();
    }
    m_busy = true;
    lock.unlock();
    try {
      m_target->onEvent(event);
    } catch (...) {
      // A sink's failure must not take the trainer down; the run writer reports its own.
    }
    lock.lock();
    m_busy = false;
    if (m_queue.empty()) m_idleCv.notify_all();
  }
}

}  // namespace netsmith::run
