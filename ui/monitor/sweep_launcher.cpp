#include "monitor/sweep_launcher.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <exception>

#include "project/project.h"
#include "session/project_document.h"
#include "session/sweep_session.h"

namespace netsmith::ui {

namespace {

QString defaultCli() {
  const QString beside =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("netsmith-cli"));
  if (QFileInfo(beside).isExecutable()) return beside;
  return QStandardPaths::findExecutable(QStringLiteral("netsmith-cli"));
}

}  // namespace

SweepLauncher::SweepLauncher(ProjectDocument* document, QObject* parent)
    : QObject(parent),
      m_document(document),
      m_program(defaultCli()),
      m_session(new SweepSession(this)) {
  connect(m_session, &SweepSession::eventArrived, this, &SweepLauncher::eventArrived);
  connect(m_session, &SweepSession::textArrived, this, &SweepLauncher::textArrived);
  connect(m_session, &SweepSession::finished, this, [this](int exitCode) {
    dropSnapshot();
    emit finished(exitCode);
  });
}

SweepLauncher::~SweepLauncher() {
  m_session->disconnect(this);
  delete m_session;  // stops a running sweep before its snapshot goes
  m_session = nullptr;
  dropSnapshot();
}

bool SweepLauncher::isRunning() const {
  return m_session->isRunning();
}

QStringList SweepLauncher::runArguments(QString* error) {
  if (m_document->filePath().isEmpty()) {
    *error = tr("Save the project first: each trial runs a copy of its file.");
    return {};
  }
  // Unsaved edits are swept as they are, from a snapshot beside the project (its relative data
  // paths resolve the same), and stay unsaved in the studio: the sweep never saves for the user.
  QString project = m_document->filePath();
  dropSnapshot();
  if (m_document->isModified()) {
    const QFileInfo file(project);
    const QString snapshot = file.absoluteDir().filePath(
        QStringLiteral(".%1.sweep-snapshot.netsmith.json").arg(file.fileName().section('.', 0, 0)));
    try {
      project::saveProject(m_document->project(), snapshot.toStdString());
    } catch (const std::exception& e) {
      *error = tr("Could not write the sweep's snapshot of the project: %1")
                   .arg(QString::fromUtf8(e.what()));
      return {};
    }
    m_snapshot = project = snapshot;
  }
  const QString out = QFileInfo(m_document->filePath()).absoluteDir().filePath("sweeps");
  QStringList args = {QStringLiteral("sweep"), project, QStringLiteral("--out"), out,
                      QStringLiteral("--json")};
  if (m_limitTrain > 0) args << QStringLiteral("--limit-train") << QString::number(m_limitTrain);
  if (m_limitValidation > 0)
    args << QStringLiteral("--limit-val") << QString::number(m_limitValidation);
  return args;
}

bool SweepLauncher::start(const QStringList& args, QString* error) {
  if (m_session->start(m_program, args, error)) return true;
  dropSnapshot();
  return false;
}

void SweepLauncher::stop() {
  m_session->stop();
}

void SweepLauncher::dropSnapshot() {
  if (m_snapshot.isEmpty()) return;
  QFile::remove(m_snapshot);  // the sweep keeps its own copy (base.netsmith.json)
  m_snapshot.clear();
}

}  // namespace netsmith::ui
