#include "shell/guide_window.h"

#include <algorithm>

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImage>
#include <QKeySequence>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <QVariant>

namespace netsmith::ui {

namespace {

/// A browser whose pictures fit its width (the guide's screenshots are 1280 pixels wide).
class GuideBrowser : public QTextBrowser {
 public:
  using QTextBrowser::QTextBrowser;

  QVariant loadResource(int type, const QUrl& name) override {
    QVariant resource = QTextBrowser::loadResource(type, name);
    if (type != QTextDocument::ImageResource) return resource;
    QImage image;
    if (resource.canConvert<QImage>()) image = resource.value<QImage>();
    if (image.isNull() && resource.canConvert<QByteArray>())
      image.loadFromData(resource.toByteArray());
    const int width = std::max(320, viewport()->width() - 24);
    if (image.isNull() || image.width() <= width) return resource;
    return image.scaledToWidth(width, Qt::SmoothTransformation);
  }
};

}  // namespace

GuideWindow::GuideWindow(const QString& guideDir, QWidget* parent)
    : QWidget(parent, Qt::Window), m_dir(guideDir) {
  setObjectName(QStringLiteral("guideWindow"));
  setAttribute(Qt::WA_DeleteOnClose);
  resize(900, 700);
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  const auto button = [&](const QString& text, const char* name, const QKeySequence& keys,
                          const QString& tip) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setObjectName(QLatin1String(name));
    b->setShortcut(keys);
    b->setToolTip(tip + QStringLiteral(" (") + keys.toString(QKeySequence::NativeText) +
                  QStringLiteral(")"));
    bar->addWidget(b);
    return b;
  };
  m_back = button(tr("Back"), "guideBack", QKeySequence::Back, tr("The page before"));
  m_forward = button(tr("Forward"), "guideForward", QKeySequence::Forward, tr("The page after"));
  auto* contents = button(tr("Contents"), "guideContents", QKeySequence(Qt::ALT | Qt::Key_Home),
                          tr("The guide's list of topics"));
  bar->addStretch(1);
  layout->addLayout(bar);
  m_browser = new GuideBrowser(this);
  m_browser->setObjectName(QStringLiteral("guideBrowser"));
  // Pages and pictures of the guide open here; anything else (a web link, the source tree)
  // goes to the desktop's own program.
  m_browser->setOpenLinks(false);
  layout->addWidget(m_browser, 1);
  connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& link) {
    const QUrl target = m_browser->source().resolved(link);
    if (target.isLocalFile() && target.toLocalFile().endsWith(QStringLiteral(".md")) &&
        QFileInfo(target.toLocalFile()).isFile()) {
      m_browser->setSource(target, QTextDocument::MarkdownResource);
    } else if (link.isRelative() && link.path().isEmpty() && link.hasFragment()) {
      m_browser->scrollToAnchor(link.fragment());
    } else {
      QDesktopServices::openUrl(target);
    }
  });
  connect(m_back, &QToolButton::clicked, m_browser, &QTextBrowser::backward);
  connect(m_forward, &QToolButton::clicked, m_browser, &QTextBrowser::forward);
  connect(contents, &QToolButton::clicked, this, [this] { showPage(QStringLiteral("README.md")); });
  connect(m_browser, &QTextBrowser::backwardAvailable, m_back, &QToolButton::setEnabled);
  connect(m_browser, &QTextBrowser::forwardAvailable, m_forward, &QToolButton::setEnabled);
  connect(m_browser, &QTextBrowser::sourceChanged, this, &GuideWindow::updateTitle);
  m_back->setEnabled(false);
  m_forward->setEnabled(false);
  updateTitle();
}

void GuideWindow::showPage(const QString& page) {
  const QString file = page.section(QLatin1Char('#'), 0, 0);
  const QString anchor = page.section(QLatin1Char('#'), 1);
  const QString path = QDir(m_dir).filePath(file);
  if (m_dir.isEmpty() || !QFileInfo(path).isFile()) {
    m_browser->setMarkdown(
        tr("# The guide is not here\n\nNetsmith looks for its guide in `$NETSMITH_DOCS/guide`, "
           "in `share/doc/netsmith/guide` beside the installed program, and in the source "
           "tree's `docs/guide`; none of them holds `%1`.")
            .arg(file));
    updateTitle();
    return;
  }
  QUrl url = QUrl::fromLocalFile(path);
  if (!anchor.isEmpty()) url.setFragment(anchor);
  m_browser->setSource(url, QTextDocument::MarkdownResource);
}

QString GuideWindow::currentPage() const {
  const QUrl source = m_browser->source();
  return source.isLocalFile() ? QFileInfo(source.toLocalFile()).fileName() : QString();
}

void GuideWindow::updateTitle() {
  // A page's title is its first heading.
  const QString title = m_browser->document()->firstBlock().text().trimmed();
  setWindowTitle(title.isEmpty() ? tr("Netsmith guide") : tr("%1 - Netsmith guide").arg(title));
}

}  // namespace netsmith::ui
