// The model editor on the offscreen platform: the document API, the canvas with simulated
// mouse drags, the palette, the inspector, undo/redo, refusals, quick fixes, copy/paste,
// exports, and the round trip through the project file and netsmith-cli.
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QFile>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUndoStack>
#include <QtTest>

#include "editor/graph_canvas.h"
#include "editor/model_editor.h"
#include "editor/model_page.h"
#include "editor/node_inspector.h"
#include "editor/op_palette.h"
#include "graph/model_graph.h"
#include "input_driver.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "session/project_document.h"

using netsmith::Json;
using netsmith::ui::GraphCanvas;
using netsmith::ui::ModelEditor;
using netsmith::ui::ModelPage;
using netsmith::ui::ProjectDocument;

namespace {

QString example() {
  return QStringLiteral(NETSMITH_SOURCE_DIR "/resources/templates/fashion_mnist_cnn.netsmith.json");
}

/// The default project with an empty model (the Input declaration kept).
QString writeEmptyProject(const QTemporaryDir& dir) {
  auto loaded = netsmith::project::loadProject(example().toStdString());
  loaded.project.model.nodes.clear();
  const QString path = dir.filePath(QStringLiteral("empty.netsmith.json"));
  netsmith::project::saveProject(loaded.project, path.toStdString());
  return path;
}

Json templateModel() {
  return netsmith::graph::modelToJson(
      netsmith::project::loadProject(example().toStdString()).project.model);
}

Json modelJson(const ProjectDocument& doc) {
  return netsmith::graph::modelToJson(doc.project().model);
}

/// The default CNN's layers after the Input: op and parameters, in the template's order.
const std::vector<std::pair<QString, Json>>& defaultLayers() {
  static const std::vector<std::pair<QString, Json>> layers = {
      {"Conv2d", Json{{"out_channels", 32}, {"kernel_size", 3}, {"padding", 1}}},
      {"BatchNorm2d", Json::object()},
      {"ReLU", Json::object()},
      {"MaxPool2d", Json{{"kernel_size", 2}}},
      {"Conv2d", Json{{"out_channels", 64}, {"kernel_size", 3}, {"padding", 1}}},
      {"BatchNorm2d", Json::object()},
      {"ReLU", Json::object()},
      {"MaxPool2d", Json{{"kernel_size", 2}}},
      {"Flatten", Json::object()},
      {"Linear", Json{{"out_features", 128}}},
      {"ReLU", Json::object()},
      {"Dropout", Json{{"p", 0.3}}},
      {"Linear", Json{{"out_features", 10}}}};
  return layers;
}

void setParams(ModelEditor& editor, const QString& id, const Json& params) {
  for (auto it = params.begin(); it != params.end(); ++it)
    editor.setParam(id, QString::fromStdString(it.key()), it.value());
}

QPoint viewPoint(GraphCanvas* canvas, QPointF scene) {
  return canvas->mapFromScene(scene);
}

/// Pairs of nodes whose boxes overlap, from the model's own positions ("a/b").
QStringList overlappingNodes(const netsmith::graph::ModelGraph& model) {
  QStringList pairs;
  auto box = [](const netsmith::graph::Node& n) {
    return QRectF(n.x - GraphCanvas::kNodeWidth / 2, n.y, GraphCanvas::kNodeWidth,
                  GraphCanvas::kNodeHeight);
  };
  for (std::size_t i = 0; i < model.nodes.size(); ++i)
    for (std::size_t j = i + 1; j < model.nodes.size(); ++j)
      if (box(model.nodes[i]).intersects(box(model.nodes[j])))
        pairs << QString::fromStdString(model.nodes[i].id + "/" + model.nodes[j].id);
  return pairs;
}

/// A Model page shown at `size` on its own document.
struct ShownPage {
  ProjectDocument doc;
  ModelPage page;
  ShownPage(const netsmith::RegistriesPtr& registries, QSize size) : doc(registries), page(&doc) {
    page.resize(size);
    page.show();
  }
  /// Whether the page was exposed and the project at `path` then loaded.
  bool load(const QString& path) { return QTest::qWaitForWindowExposed(&page) && doc.load(path); }
};

/// An op dragged from the palette and dropped at `at` (view coordinates) on the canvas.
void dropOp(GraphCanvas* canvas, const char* op, QPoint at) {
  QMimeData mime;
  mime.setData(QLatin1String(GraphCanvas::kOpMime), op);
  QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, {});
  QApplication::sendEvent(canvas->viewport(), &enter);
  QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, {});
  QApplication::sendEvent(canvas->viewport(), &drop);
}

}  // namespace

class ModelEditorTest : public QObject {
  Q_OBJECT

 private slots:
  // The default CNN through the document API equals the template's model; undo takes it back to
  // empty and redo to the same JSON.
  void buildsTheDefaultCnnThroughTheApiAndUndoesEverything() {
    QTemporaryDir dir;
    ProjectDocument doc(m_registries);
    QVERIFY(doc.load(writeEmptyProject(dir)));
    const Json empty = modelJson(doc);
    ModelEditor editor(&doc);
    QString last = editor.addNode(QStringLiteral("Input"), QPointF(0, 0));
    QCOMPARE(last, QStringLiteral("input"));
    for (const auto& [op, params] : defaultLayers()) {
      last = editor.addNode(op, {}, last);  // appended after the previous layer
      QVERIFY(!last.isEmpty());
      setParams(editor, last, params);
    }
    QCOMPARE(modelJson(doc), templateModel());
    QVERIFY(doc.problems().empty());
    QCOMPARE(doc.analysis().totalParams, 421834);
    QVERIFY(doc.isModified());
    // 14 nodes + 6 parameters = 20 steps (no two edits of one field in a row). A new Conv2d
    // starts with 32 3x3 filters and padding 1, so conv1's three and conv2's kernel and padding
    // are no edits.
    QCOMPARE(doc.undoStack()->count(), 14 + 6);
    while (doc.undoStack()->canUndo())
      doc.undoStack()->undo();
    QCOMPARE(modelJson(doc), empty);
    QVERIFY(!doc.isModified());
    while (doc.undoStack()->canRedo())
      doc.undoStack()->redo();
    QCOMPARE(modelJson(doc), templateModel());
  }

  // The same network through the widgets: palette double-clicks add the nodes, mouse drags
  // from output ports connect them, the inspector sets a parameter.
  void buildsTheDefaultCnnWithTheMouse() {
    QTemporaryDir dir;
    ShownPage shown(m_registries, QSize(1300, 900));
    ProjectDocument& doc = shown.doc;  // (a lambda below uses the page)
    ModelPage& page = shown.page;
    QVERIFY(shown.load(writeEmptyProject(dir)));
    auto* canvas = page.canvas();
    auto* tree = page.opPalette()->tree();
    auto addByDoubleClick = [&](const QString& op) {
      canvas->selectNodes({});  // unconnected, below the others
      QTreeWidgetItem* item = page.opPalette()->itemFor(op);
      QVERIFY(item);
      tree->scrollToItem(item);
      const QPoint at = tree->visualItemRect(item).center();
      QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, at);
      QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, at);
    };
    QStringList ids;
    addByDoubleClick(QStringLiteral("Input"));
    ids << QStringLiteral("input");
    for (const auto& [op, params] : defaultLayers()) {
      addByDoubleClick(op);
      ids << canvas->selectedIds().value(0);
    }
    QCOMPARE(canvas->nodeCount(), 14);
    QCOMPARE(canvas->edgeCount(), 0);
    canvas->fitToView();
    // Connect each layer to the next by dragging from its output port onto the next node.
    for (int i = 0; i + 1 < ids.size(); ++i) {
      canvas->centerOn(canvas->outputPort(ids[i]));
      const QPoint from = viewPoint(canvas, canvas->outputPort(ids[i]));
      const QPoint to = viewPoint(
          canvas, canvas->inputPort(ids[i + 1]) + QPointF(0, GraphCanvas::kNodeHeight / 2));
      QTest::mousePress(canvas->viewport(), Qt::LeftButton, {}, from);
      QTest::mouseMove(canvas->viewport(), (from + to) / 2);
      QTest::mouseMove(canvas->viewport(), to);
      QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, {}, to);
    }
    QCOMPARE(canvas->edgeCount(), 13);
    // One parameter through the inspector's generated form, the rest through the editor.
    canvas->selectNodes({QStringLiteral("conv1")});
    auto* outChannels =
        qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("out_channels")));
    QVERIFY(outChannels);
    outChannels->setValue(32);
    QCOMPARE(doc.project().model.find("conv1")->params["out_channels"], Json(32));
    for (int i = 0; i < int(defaultLayers().size()); ++i)
      setParams(*page.editor(), ids[i + 1], defaultLayers()[std::size_t(i)].second);
    QCOMPARE(modelJson(doc), templateModel());
    // Shapes on the edges and key parameters in the nodes.
    QCOMPARE(canvas->edgeLabel(QStringLiteral("conv1"), QStringLiteral("bn1")),
             QStringLiteral("32x28x28"));
    QCOMPARE(canvas->edgeLabel(QStringLiteral("flatten"), QStringLiteral("fc1")),
             QStringLiteral("3136"));
    QCOMPARE(canvas->nodeLabel(QStringLiteral("conv1")), QStringLiteral("Conv 3x3, 32, s1"));
    // Dragging a node moves it (one undo step).
    const int steps = doc.undoStack()->count();
    const QPointF before(doc.project().model.find("relu1")->x,
                         doc.project().model.find("relu1")->y);
    canvas->centerOn(canvas->inputPort(QStringLiteral("relu1")));
    const QPoint grab =
        viewPoint(canvas, canvas->inputPort(QStringLiteral("relu1")) + QPointF(-40, 20));
    QTest::mousePress(canvas->viewport(), Qt::LeftButton, {}, grab);
    QTest::mouseMove(canvas->viewport(), grab + QPoint(30, 5));
    QTest::mouseMove(canvas->viewport(), grab + QPoint(60, 10));
    QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, {}, grab + QPoint(60, 10));
    QCOMPARE(doc.undoStack()->count(), steps + 1);
    QVERIFY(doc.project().model.find("relu1")->x > before.x());
    doc.undoStack()->undo();
    QCOMPARE(doc.project().model.find("relu1")->x, before.x());
  }

  void refusesCyclesAndWrongInputCounts() {
    QTemporaryDir dir;
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    page.resize(1200, 900);
    page.show();
    QVERIFY(doc.load(example()));
    ModelEditor& editor = *page.editor();
    QString why;
    QVERIFY(!editor.connectNodes(QStringLiteral("fc2"), QStringLiteral("conv1"), &why));
    QVERIFY2(why.contains(QStringLiteral("cycle")), qPrintable(why));
    QVERIFY(!editor.connectNodes(QStringLiteral("relu1"), QStringLiteral("conv2"), &why));
    QVERIFY2(why.contains(QStringLiteral("takes 1 input")), qPrintable(why));
    QVERIFY(!editor.connectNodes(QStringLiteral("conv1"), QStringLiteral("input"), &why));
    QVERIFY(!editor.connectNodes(QStringLiteral("conv1"), QStringLiteral("conv1"), &why));
    QCOMPARE(doc.undoStack()->count(), 0);
    // The same cycle by a mouse drag: refused, said at the cursor.
    auto* canvas = page.canvas();
    canvas->fitToView();
    QSignalSpy said(canvas, &GraphCanvas::message);
    canvas->centerOn(canvas->outputPort(QStringLiteral("relu1")));
    const QPoint from = viewPoint(canvas, canvas->outputPort(QStringLiteral("relu1")));
    const QPoint to = viewPoint(canvas, canvas->inputPort(QStringLiteral("bn1")) + QPointF(0, 28));
    QTest::mousePress(canvas->viewport(), Qt::LeftButton, {}, from);
    QTest::mouseMove(canvas->viewport(), to);
    QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, {}, to);
    QCOMPARE(said.count(), 1);
    QVERIFY(said[0][0].toString().contains(QStringLiteral("cycle")));
    QCOMPARE(doc.undoStack()->count(), 0);
    // An op dropped from the palette lands where it is dropped (its centre within a few
    // pixels of the drop point), and the view does not move.
    const QPointF viewCentre = canvas->mapToScene(canvas->viewport()->rect().center());
    const QPoint dropAt =
        viewPoint(canvas, canvas->outputPort(QStringLiteral("fc2")) + QPointF(0, 100));
    dropOp(canvas, "GELU", dropAt);
    const auto* gelu = doc.project().model.find("gelu1");
    QVERIFY(gelu);
    const QPoint landed =
        viewPoint(canvas, QPointF(gelu->x, gelu->y + GraphCanvas::kNodeHeight / 2));
    QVERIFY2((landed - dropAt).manhattanLength() <= 3,
             qPrintable(QStringLiteral("dropped at %1,%2, landed at %3,%4")
                            .arg(dropAt.x())
                            .arg(dropAt.y())
                            .arg(landed.x())
                            .arg(landed.y())));
    // (On screen: within 2 pixels, whatever the zoom.)
    QVERIFY(
        (viewPoint(canvas, viewCentre) - canvas->viewport()->rect().center()).manhattanLength() <=
        2);
    QCOMPARE(canvas->selectedIds(), QStringList{QStringLiteral("gelu1")});
    // A merge node takes several inputs.
    const QString add = editor.addNode(QStringLiteral("Add"), QPointF(300, 300));
    QVERIFY(editor.connectNodes(QStringLiteral("relu1"), add));
    QVERIFY(editor.connectNodes(QStringLiteral("bn1"), add));
    QCOMPARE(doc.project().model.find(add.toStdString())->inputs.size(), 2u);
  }

  void shapeErrorsAppearAndTheQuickFixesClearThem() {
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    QVERIFY(doc.load(example()));
    ModelEditor& editor = *page.editor();
    editor.setParam(QStringLiteral("fc1"), QStringLiteral("in_features"), Json(100));
    QCOMPARE(doc.problems().size(), 1u);
    QCOMPARE(QString::fromStdString(doc.problems()[0].nodeId), QStringLiteral("fc1"));
    QVERIFY(page.canvas()->nodeIsInvalid(QStringLiteral("fc1")));
    QCOMPARE(editor.fixFor(QStringLiteral("fc1")), QStringLiteral("Set in_features to 3136"));
    QVERIFY(!editor.applyFix(QStringLiteral("fc1")).isEmpty());
    QVERIFY(doc.problems().empty());
    QVERIFY(!page.canvas()->nodeIsInvalid(QStringLiteral("fc1")));
    QCOMPARE(doc.project().model.find("fc1")->params["in_features"], Json(3136));
    // Without the Flatten, a Linear receives a 4-D tensor: the fix inserts one.
    editor.removeNodes({QStringLiteral("flatten")});
    QVERIFY(editor.connectNodes(QStringLiteral("pool2"), QStringLiteral("fc1")));
    QVERIFY(!doc.problems().empty());
    QCOMPARE(editor.fixFor(QStringLiteral("fc1")), QStringLiteral("Insert a Flatten before it"));
    QVERIFY(!editor.applyFix(QStringLiteral("fc1")).isEmpty());
    QVERIFY2(doc.problems().empty(),
             doc.problems().empty() ? "" : doc.problems()[0].toString().c_str());
    QCOMPARE(doc.analysis().totalParams, 421834);
  }

  void copyPastePaletteSearchAndBlocks() {
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    QVERIFY(doc.load(example()));
    ModelEditor& editor = *page.editor();
    editor.setFrozen(QStringLiteral("conv1"), true);
    editor.setInit(QStringLiteral("conv1"), QStringLiteral("kaiming_normal"));
    // Frozen parameters show in the totals: conv1 has 32 x 3 x 3 weights and 32 biases.
    QVERIFY2(page.totalsText().contains(QStringLiteral("frozen 320")),
             qPrintable(page.totalsText()));
    const QStringList pasted =
        editor.paste(editor.copy({QStringLiteral("conv1"), QStringLiteral("bn1")}));
    QCOMPARE(pasted, QStringList({QStringLiteral("conv3"), QStringLiteral("bn3")}));
    const auto* c3 = doc.project().model.find("conv3");
    const auto* c1 = doc.project().model.find("conv1");
    QCOMPARE(c3->params, c1->params);
    QVERIFY(c3->frozen);
    QCOMPARE(c3->init, c1->init);
    QVERIFY(c3->inputs.empty());  // its outside input is not copied
    QCOMPARE(doc.project().model.find("bn3")->inputs, std::vector<std::string>{"conv3"});
    QCOMPARE(c3->x, c1->x + 40);
    // Through the clipboard and the page's actions.
    page.canvas()->selectNodes({QStringLiteral("fc1")});
    page.copySelection();
    QVERIFY(QApplication::clipboard()->text().contains(QStringLiteral("netsmith_clipboard")));
    page.pasteClipboard();
    QCOMPARE(page.canvas()->selectedIds(), QStringList{QStringLiteral("fc3")});
    QCOMPARE(doc.project().model.find("fc3")->params["out_features"], Json(128));
    // Palette search.
    page.opPalette()->setFilter(QStringLiteral("pool"));
    QVERIFY(page.opPalette()->itemFor(QStringLiteral("MaxPool2d")));
    QVERIFY(!page.opPalette()->itemFor(QStringLiteral("Conv2d")));
    page.opPalette()->setFilter({});
    // Blocks: a residual block after relu1 keeps the channels and adds one Add with 2 inputs.
    const QStringList block =
        editor.insertBlock(QStringLiteral("residual"), QStringLiteral("pool1"));
    QCOMPARE(block.size(), 7);
    for (const auto& p : doc.problems())  // (the pasted, unconnected conv3 has one)
      QVERIFY2(!block.contains(QString::fromStdString(p.nodeId)), p.toString().c_str());
    const auto* add = doc.project().model.find(block[5].toStdString());
    QCOMPARE(QString::fromStdString(add->op), QStringLiteral("Add"));
    QCOMPARE(add->inputs.size(), 2u);
    QCOMPARE(doc.project().model.find("conv2")->inputs,
             std::vector<std::string>{block.last().toStdString()});
    // One undo step for the whole block.
    doc.undoStack()->undo();
    QVERIFY(!doc.project().model.find(block[0].toStdString()));
  }

  // Fit on a laptop-sized page shows the whole default model (every node inside the view),
  // drawn as compact blocks below readable size; zoomed in, the minimap appears and a click low
  // in it brings the output into view; an edit does not move the view.
  void fitShowsTheWholeModel() {
    ShownPage shown(m_registries, QSize(1280, 640));
    auto& [doc, page] = shown;
    QVERIFY(shown.load(
        QStringLiteral(NETSMITH_SOURCE_DIR "/resources/examples/fashion_mnist.netsmith.json")));
    auto* canvas = page.canvas();
    canvas->fitToView();
    QVERIFY(canvas->zoom() < 1.0);  // 21 nodes in one column do not fit at 100% here
    for (const auto& n : doc.project().model.nodes) {
      const QString id = QString::fromStdString(n.id);
      const QRect box(
          viewPoint(canvas, canvas->inputPort(id) - QPointF(GraphCanvas::kNodeWidth / 2, 0)),
          QSize(int(GraphCanvas::kNodeWidth * canvas->zoom()),
                int(GraphCanvas::kNodeHeight * canvas->zoom())));
      QVERIFY2(canvas->viewport()->rect().contains(box), qPrintable(id));
    }
    QVERIFY(!canvas->minimap()->isVisible());
    // Zoomed in to readable text, the model no longer fits: the minimap takes over.
    canvas->zoomBy(1.0 / canvas->zoom());
    const int appPixels = QFontInfo(QApplication::font()).pixelSize();
    QVERIFY(QFontInfo(GraphCanvas::nodeFont()).pixelSize() * canvas->zoom() >= appPixels);
    QVERIFY(canvas->minimap()->isVisible());
    QWidget* map = canvas->minimap();
    QTest::mouseClick(map, Qt::LeftButton, {}, QPoint(map->width() / 2, map->height() - 8));
    const QPoint out =
        viewPoint(canvas, canvas->inputPort(QString::fromStdString(doc.analysis().outputId)));
    QVERIFY(canvas->viewport()->rect().contains(out));
    // An edit does not move the view.
    const QPointF centre = canvas->mapToScene(canvas->viewport()->rect().center());
    page.editor()->setParam(QStringLiteral("conv1"), QStringLiteral("out_channels"), Json(40));
    QVERIFY((canvas->mapToScene(canvas->viewport()->rect().center()) - centre).manhattanLength() <
            2);
    // Zoom to selection: the selected node fills the view at up to 150%.
    canvas->selectNodes({QStringLiteral("fc1")});
    canvas->zoomToSelection();
    QVERIFY(canvas->viewport()->rect().contains(
        viewPoint(canvas, canvas->inputPort(QStringLiteral("fc1")))));
    QVERIFY(canvas->zoom() > 1.0);
  }

  // An op dropped while one node is selected reads that node's output (and takes over its
  // consumers); dropped on top of a node with nothing selected, it lands beside it. A Linear
  // without out_features gets a Fix that sets the data's class count.
  void dropsConnectAndLandClearAndLinearGetsItsFix() {
    ShownPage shown(m_registries, QSize(1280, 900));
    auto& [doc, page] = shown;
    QVERIFY(shown.load(example()));
    doc.setDataClasses(10);
    auto* canvas = page.canvas();
    canvas->fitToView();
    const auto drop = [canvas](const char* op, QPointF scene) {
      dropOp(canvas, op, viewPoint(canvas, scene));
    };
    canvas->selectNodes({QStringLiteral("relu1")});
    drop("GELU", canvas->outputPort(QStringLiteral("fc2")) + QPointF(300, 200));
    const auto* gelu = doc.project().model.find("gelu1");
    QVERIFY(gelu);
    QCOMPARE(gelu->inputs, std::vector<std::string>{"relu1"});
    QCOMPARE(doc.project().model.find("pool1")->inputs, std::vector<std::string>{"gelu1"});
    QVERIFY2(overlappingNodes(doc.project().model).isEmpty(),
             qPrintable(overlappingNodes(doc.project().model).join(QLatin1Char(' '))));
    // Nothing selected, dropped onto conv2's box: it lands clear of every node.
    canvas->selectNodes({});
    drop("SiLU", canvas->inputPort(QStringLiteral("conv2")) + QPointF(0, 28));
    QVERIFY(doc.project().model.find("silu1"));
    QVERIFY2(overlappingNodes(doc.project().model).isEmpty(),
             qPrintable(overlappingNodes(doc.project().model).join(QLatin1Char(' '))));
    // fc2 without out_features: a problem with a Fix that sets the 10 classes.
    page.editor()->setParam(QStringLiteral("fc2"), QStringLiteral("out_features"), Json());
    QVERIFY(!doc.project().model.find("fc2")->params.contains("out_features"));
    QCOMPARE(page.editor()->fixFor(QStringLiteral("fc2")),
             QStringLiteral("Set out_features to 10 (the data's classes)"));
    QVERIFY(canvas->nodeIsInvalid(QStringLiteral("fc2")));
    page.editor()->applyFix(QStringLiteral("fc2"));
    QCOMPARE(doc.project().model.find("fc2")->params["out_features"], Json(10));
    QVERIFY(!canvas->nodeIsInvalid(QStringLiteral("fc2")));
  }

  // The imported ResNet-18 fits whole; with its stages collapsed (layer1 to layer4 each one
  // block with its totals) it fits at a readable size, and a double click expands a stage.
  void groupsCollapseAndExpand() {
    ShownPage shown(m_registries, QSize(1280, 640));
    auto& [doc, page] = shown;
    QVERIFY(shown.load(
        QStringLiteral(NETSMITH_SOURCE_DIR "/resources/templates/resnet18.netsmith.json")));
    auto* canvas = page.canvas();
    const QStringList stages = {QStringLiteral("layer1"), QStringLiteral("layer2"),
                                QStringLiteral("layer3"), QStringLiteral("layer4")};
    QCOMPARE(canvas->groups(), stages);
    canvas->fitToView();
    const double wholeZoom = canvas->zoom();
    QCOMPARE(canvas->visibleNodeCount(), int(doc.project().model.nodes.size()));
    const QRectF all = canvas->scene()->itemsBoundingRect();
    QVERIFY(canvas->mapToScene(canvas->viewport()->rect()).boundingRect().contains(all));
    // Collapsed: 4 blocks instead of their members, the rest moved up; still fits, larger.
    auto* collapse = page.findChild<QAction*>(QStringLiteral("actionCollapseGroups"));
    QVERIFY(collapse && collapse->isEnabled());
    collapse->trigger();
    int members = 0;
    for (const auto& n : doc.project().model.nodes)
      if (QString::fromStdString(n.id).startsWith(QLatin1String("layer"))) ++members;
    QCOMPARE(canvas->visibleNodeCount(), int(doc.project().model.nodes.size()) - members);
    for (const auto& stage : stages)
      QVERIFY2(!canvas->groupRect(stage).isEmpty(), qPrintable(stage));
    QVERIFY(canvas->zoom() > 2 * wholeZoom);
    QVERIFY(canvas->mapToScene(canvas->viewport()->rect())
                .boundingRect()
                .contains(canvas->scene()->itemsBoundingRect()));
    // The stages stay in order, top to bottom, and the head follows them.
    for (int i = 0; i + 1 < stages.size(); ++i)
      QVERIFY(canvas->groupRect(stages[i]).top() < canvas->groupRect(stages[i + 1]).top());
    QVERIFY(canvas->inputPort(QString::fromStdString(doc.analysis().outputId)).y() >
            canvas->groupRect(QStringLiteral("layer4")).bottom());
    // The model's positions did not change (nothing to undo, nothing to save).
    QCOMPARE(doc.undoStack()->count(), 0);
    // A double click on layer2's block expands it alone.
    const QPoint at = viewPoint(canvas, canvas->groupRect(QStringLiteral("layer2")).center());
    QTest::mouseDClick(canvas->viewport(), Qt::LeftButton, {}, at);
    QVERIFY(!canvas->isGroupCollapsed(QStringLiteral("layer2")));
    QVERIFY(canvas->isGroupCollapsed(QStringLiteral("layer3")));
    QVERIFY(!canvas->inputPort(QStringLiteral("layer2_0_conv1")).isNull());
    // Dragging a node below a collapsed group saves it where it stands with all expanded.
    const auto* fc = doc.project().model.find(doc.analysis().outputId);
    const QPointF before(fc->x, fc->y);
    const QString fcId = QString::fromStdString(fc->id);
    canvas->centerOn(canvas->inputPort(fcId));
    const QPoint grab = viewPoint(canvas, canvas->inputPort(fcId) + QPointF(-40, 20));
    QTest::mousePress(canvas->viewport(), Qt::LeftButton, {}, grab);
    QTest::mouseMove(canvas->viewport(), grab + QPoint(20, 0));
    QTest::mouseMove(canvas->viewport(), grab + QPoint(40, 0));
    QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, {}, grab + QPoint(40, 0));
    const auto* moved = doc.project().model.find(fc->id);
    QVERIFY(moved->x > before.x());
    QCOMPARE(moved->y, before.y());
    // Selecting a hidden node expands its group.
    canvas->selectNodes({QStringLiteral("layer3_0_conv1")});
    QVERIFY(!canvas->isGroupCollapsed(QStringLiteral("layer3")));
    QCOMPARE(canvas->selectedIds(), QStringList{QStringLiteral("layer3_0_conv1")});
  }

  // Inserting on an edge, a quick fix's Flatten and a block push what is below down: no two
  // nodes overlap afterwards. The red node's Fix button applies its fix.
  void insertionsMakeRoomAndTheFixButtonApplies() {
    ShownPage shown(m_registries, QSize(1280, 900));
    auto& [doc, page] = shown;
    QVERIFY(shown.load(example()));
    ModelEditor& editor = *page.editor();
    QVERIFY(overlappingNodes(doc.project().model).isEmpty());
    const double bnBefore = doc.project().model.find("bn1")->y;
    const QString drop = editor.insertOnEdge(QStringLiteral("conv1"), QStringLiteral("bn1"),
                                             QStringLiteral("Dropout"));
    QVERIFY(!drop.isEmpty());
    QCOMPARE(doc.project().model.find(drop.toStdString())->y, bnBefore);
    QVERIFY(doc.project().model.find("bn1")->y > bnBefore);
    QVERIFY2(overlappingNodes(doc.project().model).isEmpty(),
             qPrintable(overlappingNodes(doc.project().model).join(' ')));
    QVERIFY(!editor.insertBlock(QStringLiteral("conv_bn_relu"), QStringLiteral("pool1")).isEmpty());
    QVERIFY(overlappingNodes(doc.project().model).isEmpty());
    // Without its Flatten, fc1 is red with a Fix button; a click on it inserts the Flatten.
    editor.removeNodes({QStringLiteral("flatten")});
    QVERIFY(editor.connectNodes(QStringLiteral("pool2"), QStringLiteral("fc1")));
    QVERIFY(page.canvas()->nodeIsInvalid(QStringLiteral("fc1")));
    auto* fixInInspector = page.inspector()->findChild<QPushButton*>(QStringLiteral("nodeFix"));
    page.canvas()->selectNodes({QStringLiteral("fc1")}, true);
    QVERIFY(fixInInspector && fixInInspector->isVisible());
    QVERIFY(fixInInspector->text().contains(QStringLiteral("Flatten")));
    auto* canvas = page.canvas();
    const QPointF fixAt =
        canvas->inputPort(QStringLiteral("fc1")) + QPointF(GraphCanvas::kNodeWidth / 2 - 14, 10);
    QTest::mouseClick(canvas->viewport(), Qt::LeftButton, {}, viewPoint(canvas, fixAt));
    QVERIFY2(doc.problems().empty(),
             doc.problems().empty() ? "" : doc.problems()[0].toString().c_str());
    QVERIFY2(overlappingNodes(doc.project().model).isEmpty(),
             qPrintable(overlappingNodes(doc.project().model).join(' ')));
  }

  // An "auto" field shows the value it stands for (fc1's input: 64 x 7 x 7 = 3136), and
  // switching it to "value" starts from it; a new node's required field is empty, not "1".
  void inspectorShowsInferredValuesAndEmptyRequiredFields() {
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    QVERIFY(doc.load(example()));
    QVERIFY(!doc.project().model.find("fc1")->params.contains("in_features"));
    page.canvas()->selectNodes({QStringLiteral("fc1")});
    auto* in = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("in_features")));
    QVERIFY(in);
    QCOMPARE(in->value(), 64 * 7 * 7);
    QVERIFY(!in->isEnabled());
    auto* keyword = in->parentWidget()->findChild<QComboBox*>();
    QVERIFY(keyword);
    QCOMPARE(keyword->currentText(), QStringLiteral("auto"));
    keyword->setCurrentIndex(0);  // "value"
    QCOMPARE(doc.project().model.find("fc1")->params["in_features"], Json(3136));
    QVERIFY(doc.problems().empty());
    // A Linear appended at the model's output has one unit per class of the data.
    doc.setDataClasses(7);
    QCOMPARE(doc.analysis().outputId, std::string("fc2"));
    const QString head =
        page.editor()->addNode(QStringLiteral("Linear"), {}, QStringLiteral("fc2"));
    QVERIFY2(doc.project().model.find(head.toStdString()), qPrintable(head));
    QCOMPARE(doc.project().model.find(head.toStdString())->params["out_features"], Json(7));
    // A Linear added on its own: out_features is required and shows empty; the node is red.
    const QString fc = page.editor()->addNode(QStringLiteral("Linear"), QPointF(400, 0));
    QVERIFY(doc.project().model.find(fc.toStdString()));
    page.canvas()->selectNodes({fc});
    auto* out = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("out_features")));
    QVERIFY(out);
    QVERIFY2(out->text().trimmed().isEmpty(), qPrintable(out->text()));
    QVERIFY(page.canvas()->nodeIsInvalid(fc));
    out->setValue(12);
    QCOMPARE(doc.project().model.find(fc.toStdString())->params["out_features"], Json(12));
    // A new Conv2d starts with 32 filters.
    const QString conv = page.editor()->addNode(QStringLiteral("Conv2d"), QPointF(600, 0));
    QVERIFY(doc.project().model.find(conv.toStdString()));
    QCOMPARE(doc.project().model.find(conv.toStdString())->params["out_channels"], Json(32));
  }

  void inspectorEditsMergeAndReadBackAfterUndo() {
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    QVERIFY(doc.load(example()));
    page.canvas()->selectNodes({QStringLiteral("conv2")});
    QCOMPARE(page.inspector()->node(), QStringLiteral("conv2"));
    auto* spin = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("out_channels")));
    QVERIFY(spin);
    QCOMPARE(spin->value(), 64);
    QVERIFY(spin->toolTip().contains(QStringLiteral("filters")));
    spin->setValue(65);
    spin->setValue(66);
    spin->setValue(80);
    QCOMPARE(doc.undoStack()->count(), 1);  // one field, one step
    QCOMPARE(doc.project().model.find("conv2")->params["out_channels"], Json(80));
    QCOMPARE(doc.analysis().find("conv2")->outputShape, (netsmith::Shape{80, 14, 14}));
    doc.undoStack()->undo();
    QCOMPARE(spin->value(), 64);  // the form reads the model again
    // Deleting the node empties the inspector.
    page.canvas()->selectNodes({QStringLiteral("conv2")});
    page.editor()->removeNodes({QStringLiteral("conv2")});
    QVERIFY(!page.inspector()->field(QStringLiteral("out_channels")));
  }

  // The Input node's fields are the model input's: a height typed in reaches the project and
  // every shape after it; one undo step puts it back, and the field reads it again.
  void theInputNodeEditsTheModelInput() {
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    QVERIFY(doc.load(example()));
    page.resize(1100, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.canvas()->selectNodes({QStringLiteral("input")});
    auto* channels = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("channels")));
    auto* height = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("height")));
    auto* width = qobject_cast<QSpinBox*>(page.inspector()->field(QStringLiteral("width")));
    QVERIFY(channels && height && width);
    QCOMPARE(channels->value(), 1);
    QCOMPARE(height->value(), 28);
    QCOMPARE(width->value(), 28);
    const int steps = doc.undoStack()->count();
    netsmith::uitest::typeInto(height, QStringLiteral("32"));
    QCOMPARE(doc.project().model.input.height, std::int64_t(32));
    QCOMPARE(doc.analysis().find("input")->outputShape, (netsmith::Shape{1, 32, 28}));
    QCOMPARE(doc.undoStack()->count(), steps + 1);
    netsmith::uitest::clickArrow(channels, true);
    QCOMPARE(doc.project().model.input.channels, std::int64_t(2));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QCOMPARE(doc.project().model.input.height, std::int64_t(28));
    QCOMPARE(doc.project().model.input.channels, std::int64_t(1));
    QCOMPARE(height->value(), 28);
    QCOMPARE(channels->value(), 1);
  }

  // A hand-written model without positions opens laid out; the page exports PNG, SVG and CSV;
  // the edited model, saved, validates and summarises in netsmith-cli.
  void layoutExportsAndRoundTrip() {
    QTemporaryDir dir;
    auto loaded = netsmith::project::loadProject(example().toStdString());
    for (auto& n : loaded.project.model.nodes)
      n.x = n.y = 0;
    const QString path = dir.filePath(QStringLiteral("nopos.netsmith.json"));
    netsmith::project::saveProject(loaded.project, path.toStdString());
    ProjectDocument doc(m_registries);
    ModelPage page(&doc);
    page.resize(1200, 800);
    page.show();
    QVERIFY(doc.load(path));
    const auto& nodes = doc.project().model.nodes;
    QCOMPARE(nodes[13].y, 13 * 80.0);  // one row per layer
    QVERIFY(!doc.isModified());        // laying out a file is not an edit
    const QString png = dir.filePath(QStringLiteral("g.png")),
                  svg = dir.filePath(QStringLiteral("g.svg")),
                  csv = dir.filePath(QStringLiteral("t.csv"));
    QVERIFY(page.canvas()->exportPng(png));
    QVERIFY(!QImage(png).isNull());
    QVERIFY(page.canvas()->exportSvg(svg));
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray svgText = s.readAll();
    QVERIFY(svgText.startsWith("<svg"));
    QVERIFY(svgText.contains("conv1") && svgText.contains("32x28x28"));
    QVERIFY(page.exportTableCsv(csv));
    QFile c(csv);
    QVERIFY(c.open(QIODevice::ReadOnly));
    QVERIFY(c.readAll().contains("conv1,Conv2d,32x28x28,320,"));

    page.editor()->setParam(QStringLiteral("fc1"), QStringLiteral("out_features"), Json(64));
    QVERIFY(doc.save());
    QProcess cli;
    cli.start(QStringLiteral(NETSMITH_CLI),
              {QStringLiteral("summary"), path, QStringLiteral("--json")});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    const Json summary = Json::parse(cli.readAllStandardOutput().toStdString());
    QCOMPARE(summary["total_params"].get<long long>(), doc.analysis().totalParams);
    // Memory estimate and the largest batch that fits.
    QVERIFY(page.trainingMemory(128) > page.trainingMemory(1));
    const qint64 budget = page.trainingMemory(100);
    QCOMPARE(page.largestBatch(budget), 100);
  }

 private:
  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
};

QTEST_MAIN(ModelEditorTest)
#include "model_editor_test.moc"
