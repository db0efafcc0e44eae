#include "doctor/doctor_actions.h"

#include <QDir>
#include <QUndoCommand>
#include <QUndoStack>

#include <filesystem>

#include "common/error.h"
#include "data/data_config.h"
#include "data/manifest_edit.h"
#include "doctor/doctor_report.h"
#include "session/project_document.h"

namespace netsmith::ui {

namespace fs = std::filesystem;

namespace {

/// The source `split` of the project's data comes from (a validation cut from the training
/// data is the training source's).
const data::SourceSpec* sourceOf(const data::DataConfig& config, const std::string& split) {
  if (split == "test") return config.test ? &*config.test : nullptr;
  if (split == "validation" && config.validation) return &*config.validation;
  return &config.train;
}

bool allDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

/// A relabel as an undo step: the manifest row or the move list's row, set and put back.
class RelabelCommand : public QUndoCommand {
 public:
  explicit RelabelCommand(RelabelPlan plan) : m_plan(std::move(plan)) {
    setText(m_plan.description);
  }
  void redo() override {
    if (m_first) {  // done before the push, where a failure can still be reported
      m_first = false;
      return;
    }
    apply(false);
  }
  void undo() override { apply(true); }
  /// Sets (or, `back`, puts back) the label; throws netsmith::Error.
  void apply(bool back) const {
    if (m_plan.kind == RelabelPlan::Kind::Manifest)
      data::relabelInManifest(m_plan.file, m_plan.image, back ? m_plan.after : m_plan.before,
                              back ? m_plan.before : m_plan.after);
    else
      data::setMove(m_plan.file, m_plan.image, back ? std::string() : m_plan.after);
  }

 private:
  RelabelPlan m_plan;
  bool m_first = true;
};

}  // namespace

RelabelPlan planRelabel(const ProjectDocument& document, const doctor::SampleRef& sample,
                        std::int64_t to, const std::vector<std::string>& classes,
                        const QString& doctorFolder) {
  RelabelPlan plan;
  plan.image = sample.item;
  const auto name = [&](std::int64_t k) {
    return k >= 0 && k < std::int64_t(classes.size()) ? classes[std::size_t(k)] : std::to_string(k);
  };
  const auto& config = document.resolved().data;
  const data::SourceSpec* spec = config ? sourceOf(*config, sample.split) : nullptr;
  if (!spec) {
    plan.why = QObject::tr("The data section has problems; fix them on the Data page first.");
    return plan;
  }
  if (spec->format == data::SourceFormat::Csv) {
    try {
      plan.before = data::manifestLabel(spec->manifest, sample.item);
    } catch (const Error& e) {
      plan.why = QString::fromStdString(e.what());
      return plan;
    }
    if (plan.before != name(sample.label) && plan.before != std::to_string(sample.label)) {
      plan.why =
          QObject::tr(
              "%1 now labels it \"%2\", not %3: the manifest changed since the "
              "doctor ran; run it again.")
              .arg(QString::fromStdString(spec->manifest), QString::fromStdString(plan.before),
                   QString::fromStdString(name(sample.label)));
      return plan;
    }
    plan.kind = RelabelPlan::Kind::Manifest;
    plan.file = spec->manifest;
    plan.after = allDigits(plan.before) ? std::to_string(to) : name(to);
    plan.description =
        QObject::tr("Relabel %1 as %2 in %3")
            .arg(QString::fromStdString(fs::path(sample.item).filename().string()),
                 QString::fromStdString(name(to)),
                 QString::fromStdString(fs::path(spec->manifest).filename().string()));
    return plan;
  }
  if (spec->format == data::SourceFormat::ImageFolder) {
    // root/CLASS/rest -> root/NEW/rest
    const fs::path relative = fs::path(sample.item)
                                  .lexically_normal()
                                  .lexically_relative(fs::path(spec->root).lexically_normal());
    if (relative.empty() || *relative.begin() == "..") {
      plan.why = QObject::tr("%1 is not inside %2.")
                     .arg(QString::fromStdString(sample.item), QString::fromStdString(spec->root));
      return plan;
    }
    fs::path target = fs::path(spec->root) / name(to);
    for (auto it = std::next(relative.begin()); it != relative.end(); ++it)
      target /= *it;
    plan.kind = RelabelPlan::Kind::MoveList;
    plan.file = QDir(doctorFolder).filePath(QStringLiteral("moves.csv")).toStdString();
    plan.after = target.lexically_normal().string();
    plan.description = QObject::tr("Move %1 to %2 (move list)")
                           .arg(QString::fromStdString(fs::path(sample.item).filename().string()),
                                QString::fromStdString(name(to)));
    return plan;
  }
  plan.why = QObject::tr(
                 "%1 keeps its labels in a file the studio does not rewrite; exclude "
                 "the sample instead.")
                 .arg(QString::fromStdString(data::sourceFormatName(spec->format)));
  return plan;
}

QString relabel(ProjectDocument* document, const RelabelPlan& plan) {
  if (plan.kind == RelabelPlan::Kind::None) return plan.why;
  auto command = std::make_unique<RelabelCommand>(plan);
  try {
    command->apply(false);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  document->undoStack()->push(command.release());
  return {};
}

std::string excludeEntry(const ProjectDocument& document, const doctor::SampleRef& sample) {
  return data::excludeEntryFor(sample.item, document.baseDir().toStdString());
}

bool isExcluded(const ProjectDocument& document, const doctor::SampleRef& sample) {
  const Json& data = document.project().data;
  if (!data.is_object() || !data.contains("exclude") || !data["exclude"].is_array()) return false;
  const std::string entry = excludeEntry(document, sample);
  for (const auto& e : data["exclude"])
    if (e.is_string() && (e.get<std::string>() == entry || e.get<std::string>() == sample.item))
      return true;
  return false;
}

void excludeSample(ProjectDocument* document, const doctor::SampleRef& sample) {
  if (isExcluded(*document, sample)) return;
  Json data = document->project().data;
  if (!data.is_object()) return;
  if (!data.contains("exclude") || !data["exclude"].is_array()) data["exclude"] = Json::array();
  data["exclude"].push_back(excludeEntry(*document, sample));
  document->editSection(
      QStringLiteral("data"), data,
      QObject::tr("Exclude %1")
          .arg(QString::fromStdString(fs::path(sample.item).filename().string())));
}

}  // namespace netsmith::ui
