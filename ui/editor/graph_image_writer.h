#pragma once

// The model graph as a picture: PNG (the scene rendered at 2x) and SVG (boxes, curves and
// labels), for File > Export on the Model page.
#include <QColor>
#include <QCoreApplication>
#include <QString>

namespace netsmith::ui {

class GraphScene;

class GraphImageWriter {
  Q_DECLARE_TR_FUNCTIONS(GraphImageWriter)

 public:
  explicit GraphImageWriter(GraphScene* scene);

  /// The scene at 2x on `background`, without the selection (which it clears).
  bool writePng(const QString& path, const QColor& background, QString* error = nullptr);
  /// A plain SVG of the graph (boxes, edges, labels), written atomically.
  bool writeSvg(const QString& path, QString* error = nullptr) const;

 private:
  GraphScene* m_scene;
};

}  // namespace netsmith::ui
