#include "shell/log_panel.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include <mutex>

namespace netsmith::ui {

namespace {

constexpr int kMaxLines = 20000;

/// Formats on the logging thread, appends on the panel's thread.
class PanelSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit PanelSink(LogPanel* panel) : m_panel(panel) {}
  void detach() {
    std::lock_guard<std::mutex> lock(mutex_);
    m_panel = nullptr;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!m_panel) return;
    const QString text = QString::fromUtf8(msg.payload.data(), int(msg.payload.size()));
    const int level = int(msg.level);
    QPointer<LogPanel> panel(m_panel);
    QMetaObject::invokeMethod(
        m_panel,
        [panel, level, text] {
          if (panel) panel->append(level, text);
        },
        Qt::QueuedConnection);
  }
  void flush_() override {}

 private:
  LogPanel* m_panel;
};

const char* levelName(int level) {
  static const char* names[] = {"trace", "debug", "info", "warning", "error", "critical", "off"};
  return names[std::clamp(level, 0, 6)];
}

}  // namespace

LogPanel::LogPanel(QWidget* parent)
    : QWidget(parent),
      m_view(new QPlainTextEdit(this)),
      m_levelBox(new QComboBox(this)),
      m_filterEdit(new QLineEdit(this)) {
  setObjectName(QStringLiteral("logPanel"));
  m_view->setObjectName(QStringLiteral("logView"));
  m_view->setReadOnly(true);
  m_view->setLineWrapMode(QPlainTextEdit::NoWrap);
  m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_levelBox->setObjectName(QStringLiteral("logLevel"));
  m_levelBox->addItems({tr("Debug"), tr("Info"), tr("Warning"), tr("Error")});
  m_levelBox->setCurrentIndex(1);
  m_filterEdit->setObjectName(QStringLiteral("logFilter"));
  m_filterEdit->setPlaceholderText(tr("Filter"));
  m_filterEdit->setClearButtonEnabled(true);
  auto* copyButton = new QPushButton(tr("Copy"), this);
  copyButton->setObjectName(QStringLiteral("logCopy"));

  auto* fold = new QToolButton(this);
  fold->setObjectName(QStringLiteral("logFold"));
  fold->setText(QStringLiteral("\u25BE"));
  fold->setToolTip(tr("Fold the log to one line"));

  m_full = new QWidget(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Level:"), m_full));
  bar->addWidget(m_levelBox);
  bar->addWidget(m_filterEdit, 1);
  bar->addWidget(copyButton);
  bar->addWidget(fold);
  auto* fullLayout = new QVBoxLayout(m_full);
  fullLayout->setContentsMargins(0, 0, 0, 0);
  fullLayout->addLayout(bar);
  fullLayout->addWidget(m_view, 1);

  m_oneLine = new QWidget(this);
  m_lastLine = new QLabel(m_oneLine);
  m_lastLine->setObjectName(QStringLiteral("logLastLine"));
  m_lastLine->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens
  auto* open = new QToolButton(m_oneLine);
  open->setObjectName(QStringLiteral("logOpen"));
  open->setText(tr("Show log \u25B4"));
  auto* oneLineLayout = new QHBoxLayout(m_oneLine);
  oneLineLayout->setContentsMargins(0, 0, 0, 0);
  oneLineLayout->addWidget(m_lastLine, 1);
  oneLineLayout->addWidget(open);
  m_oneLine->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(m_full, 1);
  layout->addWidget(m_oneLine);
  connect(fold, &QToolButton::clicked, this, [this] {
    setCompact(true);
    Q_EMIT compactToggled(true);
  });
  connect(open, &QToolButton::clicked, this, [this] {
    setCompact(false);
    Q_EMIT compactToggled(false);
  });

  connect(m_levelBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { setMinimumLevel(i + 1); });  // debug=1 .. error=4
  connect(m_filterEdit, &QLineEdit::textChanged, this, &LogPanel::setFilter);
  connect(copyButton, &QPushButton::clicked, this, &LogPanel::copy);

  m_sink = std::make_shared<PanelSink>(this);
  spdlog::default_logger()->sinks().push_back(m_sink);
}

LogPanel::~LogPanel() {
  static_cast<PanelSink*>(m_sink.get())->detach();
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), m_sink), sinks.end());
}

bool LogPanel::shows(const Line& line) const {
  return line.level >= m_minLevel &&
         (m_filter.isEmpty() || line.text.contains(m_filter, Qt::CaseInsensitive));
}

void LogPanel::append(int level, const QString& text) {
  const QString stamped = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss ")) +
                          (level == 2 ? QString() : QLatin1String(levelName(level)) + ": ") + text;
  m_lines.push_back({level, stamped});
  if (m_lines.size() > kMaxLines) {
    m_lines.remove(0, m_lines.size() - kMaxLines);
    m_view->setMaximumBlockCount(kMaxLines);
  }
  if (shows(m_lines.back())) {
    m_view->appendPlainText(stamped);
    m_lastLine->setText(stamped);
  }
}

void LogPanel::setCompact(bool compact) {
  if (compact == m_compact) return;
  m_compact = compact;
  m_full->setVisible(!compact);
  m_oneLine->setVisible(compact);
  setMaximumHeight(compact ? m_oneLine->sizeHint().height() + 4 : QWIDGETSIZE_MAX);
}

void LogPanel::setMinimumLevel(int level) {
  m_minLevel = level;
  const int index = std::clamp(level - 1, 0, 3);
  if (m_levelBox->currentIndex() != index) m_levelBox->setCurrentIndex(index);
  rebuild();
}

void LogPanel::setFilter(const QString& filter) {
  m_filter = filter;
  if (m_filterEdit->text() != filter) m_filterEdit->setText(filter);
  rebuild();
}

void LogPanel::rebuild() {
  QStringList shown;
  for (const auto& line : m_lines)
    if (shows(line)) shown << line.text;
  m_view->setPlainText(shown.join(QLatin1Char('\n')));
  m_lastLine->setText(shown.isEmpty() ? QString() : shown.back());
  m_view->moveCursor(QTextCursor::End);
}

QString LogPanel::visibleText() const {
  return m_view->toPlainText();
}

void LogPanel::copy() {
  QString selected = m_view->textCursor().selectedText();
  QApplication::clipboard()->setText(selected.isEmpty() ? visibleText()
                                                        : selected.replace(QChar(0x2029), '\n'));
}

}  // namespace netsmith::ui
