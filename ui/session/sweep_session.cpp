#include "session/sweep_session.h"

#include <QProcess>

namespace netsmith::ui {

namespace {
/// A line longer than this without a newline is shown as text, cut, and dropped (a child
/// that writes without end does not grow the studio's memory).
constexpr int kMaxLineBytes = 1 << 20;
}  // namespace

SweepSession::SweepSession(QObject* parent) : QObject(parent) {}

SweepSession::~SweepSession() {
  if (isRunning()) {
    m_process->disconnect(this);
    m_process->terminate();  // the trials write checkpoints; the sweep can be resumed
    m_process->waitForFinished(30000);
  }
}

bool SweepSession::isRunning() const {
  return m_process && m_process->state() != QProcess::NotRunning;
}

bool SweepSession::start(const QString& program, const QStringList& args, QString* error) {
  if (isRunning()) {
    if (error) *error = tr("a sweep is already running");
    return false;
  }
  delete m_process;
  m_process = new QProcess(this);
  m_buffer.clear();
  m_skippingLine = false;
  connect(m_process, &QProcess::readyReadStandardOutput, this, &SweepSession::readOutput);
  connect(m_process, &QProcess::readyReadStandardError, this, [this] {
    const QString text = QString::fromUtf8(m_process->readAllStandardError()).trimmed();
    if (!text.isEmpty()) emit textArrived(text);
  });
  connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus) {
    readOutput();
    // A last line without a newline (a child killed mid-line, a message printed without one)
    // is still said.
    if (!m_buffer.isEmpty() && !m_skippingLine) emitLine(m_buffer);
    m_buffer.clear();
    m_skippingLine = false;
    emit finished(code);
  });
  m_process->start(program, args);
  if (!m_process->waitForStarted(10000)) {
    if (error) *error = tr("Could not start %1: %2").arg(program, m_process->errorString());
    return false;
  }
  return true;
}

void SweepSession::stop() {
  if (isRunning()) m_process->terminate();
}

void SweepSession::emitLine(const QByteArray& line) {
  std::optional<experiment::SweepEvent> event;
  try {
    event = experiment::SweepEvent::fromJson(Json::parse(line.toStdString()));
  } catch (const std::exception&) {
    event.reset();  // not JSON: text
  }
  if (event)
    emit eventArrived(*event);
  else
    emit textArrived(QString::fromUtf8(line));
}

void SweepSession::readOutput() {
  if (!m_process) return;
  m_buffer += m_process->readAllStandardOutput();
  if (m_skippingLine) {  // the rest of a line already shown cut
    const int nl = m_buffer.indexOf('\n');
    if (nl < 0) {
      m_buffer.clear();
      return;
    }
    m_buffer.remove(0, nl + 1);
    m_skippingLine = false;
  }
  int nl;
  while ((nl = m_buffer.indexOf('\n')) >= 0) {
    const QByteArray line = m_buffer.left(nl);
    m_buffer.remove(0, nl + 1);
    emitLine(line);
  }
  if (m_buffer.size() > kMaxLineBytes) {
    emit textArrived(QString::fromUtf8(m_buffer.left(200)) + QStringLiteral("..."));
    m_buffer.clear();
    m_skippingLine = true;
  }
}

}  // namespace netsmith::ui
