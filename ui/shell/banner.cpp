#include "shell/banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include "util/theme_colors.h"

namespace netsmith::ui {

Banner::Banner(QWidget* parent) : QFrame(parent), m_text(new QLabel(this)) {
  setObjectName(QStringLiteral("errorBanner"));
  auto* layout = new QHBoxLayout(this);
  m_text->setObjectName(QStringLiteral("errorBannerText"));
  m_text->setWordWrap(true);
  m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* close = new QToolButton(this);
  close->setText(QStringLiteral("\u2715"));
  close->setToolTip(tr("Dismiss"));
  connect(close, &QToolButton::clicked, this, &Banner::dismiss);
  layout->addWidget(m_text, 1);
  layout->addWidget(close, 0, Qt::AlignTop);
  restyle();
  hide();
}

void Banner::showText(const QString& text, bool error) {
  m_error = error;
  restyle();
  m_text->setText(text);
  show();
}

void Banner::dismiss() {
  hide();
  m_text->clear();
}

QString Banner::text() const {
  return isHidden() ? QString() : m_text->text();
}

void Banner::restyle() {
  setStyleSheet(m_error ? errorBannerStyle(objectName()) : noticeBannerStyle(objectName()));
}

}  // namespace netsmith::ui
