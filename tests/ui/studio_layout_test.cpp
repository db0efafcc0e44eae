// The studio's finish at laptop size and in both themes: the window fits the screen and
// shrinks to 1280x720 with no page reaching past it, the Edit menu acts on the model canvas,
// and every chart follows the light and dark palettes as drawn.
#include <QAbstractScrollArea>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolBar>
#include <QtTest>

#include <qcustomplot.h>

#include "editor/graph_canvas.h"
#include "editor/model_editor.h"
#include "editor/model_page.h"
#include "monitor/dashboard.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "shell/main_window.h"
#include "shell/project_files.h"
#include "shell/project_pages.h"
#include "ui_test_support.h"

using netsmith::ui::MainWindow;
using netsmith::ui::ProjectPages;
using netsmith::uitest::action;
using netsmith::uitest::example;

class StudioLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_ui_layout_tests"));
  }
  void init() { QSettings().clear(); }

  void opensWithinTheScreenWithANamedToolbar() {
    MainWindow window(m_registries);
    window.show();
    const QSize available = window.screen()->availableGeometry().size();
    const QSize least = window.minimumSizeHint();
    QVERIFY2(window.width() <= std::max(available.width(), least.width()) &&
                 window.height() <= std::max(available.height(), least.height()),
             qPrintable(QStringLiteral("%1x%2 on %3x%4")
                            .arg(window.width())
                            .arg(window.height())
                            .arg(available.width())
                            .arg(available.height())));
    // It can shrink to a 1280x720 laptop screen, and tile to half of a 1920 one.
    QVERIFY2(least.width() <= 960 && least.height() <= 720,
             qPrintable(QStringLiteral("at least %1x%2").arg(least.width()).arg(least.height())));
    auto* toolbar = window.findChild<QToolBar*>(QStringLiteral("mainToolBar"));
    QVERIFY(toolbar);
    QCOMPARE(toolbar->toggleViewAction()->text(), QStringLiteral("Toolbar"));
  }

  // At 1280x720 and at 960x720 (half a 1920 screen) with the default project, on every page,
  // no widget reaches past the window (what does not fit scrolls inside its own scroll area).
  void everyPageFitsA1280x720Window() {
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    window.resize(1280, 720);
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_COMPARE(window.size(), QSize(1280, 720));
    // The log is folded to one line on a short window, and opens on a tall one.
    auto* view = window.findChild<QWidget*>(QStringLiteral("logView"));
    auto* lastLine = window.findChild<QWidget*>(QStringLiteral("logLastLine"));
    QVERIFY(view && lastLine);
    QVERIFY(!view->isVisible() && lastLine->isVisible());
    QVERIFY(window.findChild<QWidget*>(QStringLiteral("logPanel"))->height() <
            3 * QFontMetrics(QApplication::font()).height());
    checkEveryPageFits(window);
    // Half of a 1920 screen: every page still within the window.
    window.resize(960, 720);
    QTRY_COMPARE(window.size(), QSize(960, 720));
    checkEveryPageFits(window);
    window.resize(1920, 1080);
    QTRY_VERIFY(view->isVisible());
    QVERIFY(!lastLine->isVisible());
  }

  // The Model page opens with the model fitted to the page as laid out, each node large enough
  // to show its op; it fits again when the window changes size, until the user zooms.
  void theModelPageOpensFittedAndLabelled() {
    MainWindow window(m_registries);
    QVERIFY(netsmith::uitest::showAt(window));
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    window.pages()->showPage(ProjectPages::ModelPage);
    auto* canvas = window.pages()->modelPage()->canvas();
    QTRY_VERIFY(canvas->isVisible());
    QApplication::processEvents();
    const double opened = canvas->zoom();
    QVERIFY2(opened >= netsmith::ui::GraphCanvas::readableScale() - 1e-9,
             qPrintable(QStringLiteral("zoom %1").arg(opened)));
    // The input node's box is in view, at the top.
    const QPointF input = canvas->inputPort(QStringLiteral("input"));
    QVERIFY(canvas->viewport()->rect().contains(canvas->mapFromScene(input + QPointF(0, 10))));
    // The page as it opened, and the Input node's inspector, in both themes (for the guide).
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
      QVERIFY(window.grab().save(shots + QStringLiteral("/model-opened.png")));
      canvas->selectNodes({QStringLiteral("input")});
      for (const char* theme : {"dark", "light"}) {
        window.findChild<QAction*>(QStringLiteral("actionTheme_") + QLatin1String(theme))
            ->trigger();
        QTest::qWait(100);
        QVERIFY(window.grab().save(shots + QStringLiteral("/input-inspector-") +
                                   QLatin1String(theme) + QStringLiteral(".png")));
      }
      canvas->selectNodes({});
      QCOMPARE(canvas->zoom(), opened);
    }
    window.resize(1920, 1080);
    QTRY_VERIFY(canvas->zoom() > opened);  // fitted again to the larger page
    const double larger = canvas->zoom();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    canvas->setFocus();
    QTest::keyClick(canvas, Qt::Key_Minus, Qt::ControlModifier);  // the user zooms out: kept
    const double chosen = canvas->zoom();
    QVERIFY(chosen < larger);
    window.resize(1280, 720);
    QTRY_COMPARE(window.size(), QSize(1280, 720));
    QApplication::processEvents();
    QCOMPARE(canvas->zoom(), chosen);
  }

  // Edit > Cut, Copy, Paste, Delete and Select All act on the canvas while the Model page is
  // shown, and are off elsewhere (where the keys belong to that page's fields).
  void editMenuActsOnTheCanvas() {
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    const auto& model = window.document()->project().model;
    const std::size_t nodes = model.nodes.size();
    auto* canvas = window.pages()->modelPage()->canvas();
    canvas->selectNodes({QStringLiteral("fc2")});
    action(window, "actionCopy")->trigger();
    QVERIFY(QApplication::clipboard()->text().contains(QStringLiteral("fc2")));
    action(window, "actionPaste")->trigger();
    QCOMPARE(model.nodes.size(), nodes + 1);
    const QStringList pasted = canvas->selectedIds();
    QCOMPARE(pasted.size(), 1);
    action(window, "actionCut")->trigger();
    QCOMPARE(model.nodes.size(), nodes);
    QVERIFY(!model.find(pasted[0].toStdString()));
    action(window, "actionSelectAll")->trigger();
    QCOMPARE(canvas->selectedIds().size(), int(nodes));
    action(window, "actionDelete")->trigger();
    QVERIFY(model.nodes.empty());
    action(window, "actionUndo")->trigger();
    QCOMPARE(model.nodes.size(), nodes);
    QCOMPARE(action(window, "actionCopy")->shortcut(), QKeySequence(QKeySequence::Copy));
    window.pages()->showPage(ProjectPages::DataPage);
    for (const char* name :
         {"actionCut", "actionCopy", "actionPaste", "actionDelete", "actionSelectAll"})
      QVERIFY2(!action(window, name)->isEnabled(), name);
  }

  // File > New starts a project with only its Input (the default data); File > New from data
  // folder makes a small CNN for a folder's classes that is valid as it is; a folder with one
  // class is refused with the reason, and the open project stays.
  void newBlankAndFromDataFolder() {
    MainWindow window(m_registries);
    window.show();
    QTemporaryDir tmp;
    QVERIFY(
        window.files()->createBlankProject(tmp.filePath(QStringLiteral("blank.netsmith.json"))));
    QCOMPARE(window.document()->project().model.nodes.size(), std::size_t(1));
    QCOMPARE(window.document()->project().name, std::string("blank"));
    QCOMPARE(window.pages()->modelPage()->canvas()->nodeCount(), 1);
    QVERIFY(window.document()->project().data.contains("train"));
    // Three classes of 24x20 colour images.
    const QDir root(tmp.filePath(QStringLiteral("shapes")));
    for (const QString& cls :
         {QStringLiteral("circle"), QStringLiteral("square"), QStringLiteral("triangle")}) {
      QVERIFY(root.mkpath(cls));
      for (int i = 0; i < 5; ++i) {
        QImage image(20, 24, QImage::Format_RGB888);
        image.fill(QColor::fromHsv((cls.size() * 40 + i * 7) % 360, 200, 200));
        QVERIFY(image.save(root.filePath(cls + QStringLiteral("/%1.png").arg(i))));
      }
    }
    const QString target = tmp.filePath(QStringLiteral("shapes.netsmith.json"));
    QVERIFY2(window.files()->createProjectFromData(root.path(), target),
             qPrintable(window.files()->lastError()));
    const auto& doc = *window.document();
    QCOMPARE(doc.filePath(), target);
    QVERIFY2(doc.problems().empty(),
             doc.problems().empty() ? "" : doc.problems()[0].toString().c_str());
    QCOMPARE(doc.analysis().outputShape, (netsmith::Shape{3}));
    QCOMPARE(doc.project().model.input.height, 24);
    QCOMPARE(doc.project().model.input.width, 20);
    QCOMPARE(doc.project().model.input.channels, 3);
    QVERIFY(QDir(root.filePath(QStringLiteral("circle"))).removeRecursively());
    QVERIFY(QDir(root.filePath(QStringLiteral("square"))).removeRecursively());
    QVERIFY(!window.files()->createProjectFromData(
        root.path(), tmp.filePath(QStringLiteral("one.netsmith.json"))));
    QVERIFY2(
        window.files()->lastError().contains(QStringLiteral("one sub-folder of images per class")),
        qPrintable(window.files()->lastError()));
    QCOMPARE(window.document()->filePath(), target);
    QVERIFY(!QFileInfo::exists(tmp.filePath(QStringLiteral("one.netsmith.json"))));
  }

  // Every chart of every page, as drawn, follows the theme: in dark its background (a corner
  // pixel) is dark, in light it is light.
  void everyChartFollowsTheTheme() {
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    action(window, "actionTheme_dark")->trigger();
    // Every chart of every page, as drawn: its background (a corner pixel) is dark, its axis
    // labels light.
    auto chartShades = [&window] {
      QStringList shades;
      for (auto* plot : window.findChildren<QCustomPlot*>()) {
        const QImage image = plot->toPixmap(320, 200).toImage();
        shades << QStringLiteral("%1=%2")
                      .arg(plot->objectName())
                      .arg(image.pixelColor(3, 3).lightness());
      }
      return shades;
    };
    const int charts = int(window.findChildren<QCustomPlot*>().size());
    QVERIFY(charts >= 9);  // six on the dashboard, the LR plan, the histogram, the class bars
    for (const auto& s : chartShades())
      QVERIFY2(s.section('=', 1).toInt() < 80, qPrintable(s));
    action(window, "actionTheme_light")->trigger();
    for (const auto& s : chartShades())
      QVERIFY2(s.section('=', 1).toInt() > 200, qPrintable(s));
    action(window, "actionTheme_system")->trigger();
  }

  // File > Import model: an ONNX classifier (exported by Debian's python3-torch here) becomes the
  // open project, laid out on the canvas, its weights beside it as init_from; "Freeze up to
  // here" and "Replace head" act on it with undo; an unsupported op is refused by name and
  // nothing is written.
  void importsAnOnnxModelAndFreezesAndReplacesItsHead() {
    if (QProcess::execute(QStringLiteral("/usr/bin/python3"),
                          {QStringLiteral("-c"), QStringLiteral("import torch")}) != 0)
      QSKIP("SKIPPED: /usr/bin/python3 has no torch (python3-torch)");
    QTemporaryDir tmp;
    const QString script = tmp.filePath(QStringLiteral("export.py"));
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"(import sys, torch
class Net(torch.nn.Module):
    def __init__(self, up):
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1),
                                            torch.nn.BatchNorm2d(8), torch.nn.ReLU())
        self.up = torch.nn.Upsample(scale_factor=1.5) if up else torch.nn.Identity()
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 3)
    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.up(self.features(x))), 1))
for up, name in ((False, 'small'), (True, 'upsample')):
    torch.onnx.export(Net(up).eval(), torch.randn(1, 1, 28, 28), sys.argv[1] + '/' + name + '.onnx',
                      opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
)");
    f.close();
    QCOMPARE(QProcess::execute(QStringLiteral("/usr/bin/python3"), {script, tmp.path()}), 0);

    // The imported project reads data/train beside it: five classes of a few images.
    for (const char* name : {"a", "b", "c", "d", "e"}) {
      const QString cls = QString::fromLatin1(name);
      QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("data/train/") + cls));
      for (int i = 0; i < 3; ++i) {
        QImage image(28, 28, QImage::Format_Grayscale8);
        image.fill(40 * i + cls.at(0).unicode() % 7);
        QVERIFY(image.save(tmp.filePath(QStringLiteral("data/train/%1/%2.png").arg(cls).arg(i))));
      }
    }
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    const QString target = tmp.filePath(QStringLiteral("small.netsmith.json"));
    QVERIFY2(window.files()->importModel(tmp.filePath(QStringLiteral("small.onnx")), target),
             qPrintable(window.files()->lastError()));
    auto& doc = *window.document();
    QCOMPARE(doc.filePath(), target);
    const auto& model = doc.project().model;
    QCOMPARE(doc.project().initFrom, std::string("small.safetensors"));
    QVERIFY(QFileInfo::exists(tmp.filePath(QStringLiteral("small.safetensors"))));
    QCOMPARE(model.input.channels, 1);
    QCOMPARE(doc.analysis().outputShape, (netsmith::Shape{3}));
    // conv, BN, ReLU, pool, flatten, fc after the input, named after the torch modules.
    QVERIFY(model.find("features_0") && model.find("features_1") && model.find("fc"));
    auto* canvas = window.findChild<netsmith::ui::GraphCanvas*>();
    QVERIFY(canvas);
    QCOMPARE(canvas->nodeCount(), int(model.nodes.size()));

    auto* editor = window.findChild<netsmith::ui::ModelEditor*>();
    QVERIFY(editor);
    editor->freezeUpTo(QStringLiteral("features_2"));
    int frozen = 0;
    for (const auto& n : doc.project().model.nodes)
      frozen += n.frozen ? 1 : 0;
    QCOMPARE(frozen, 4);  // input, conv, BN, ReLU
    QVERIFY(doc.analysis().trainableParams < doc.analysis().totalParams);
    // The head follows the data: 5 classes, not the file's 3.
    QTRY_COMPARE(doc.dataClasses(), std::int64_t(5));
    QVERIFY(editor->replaceHead());
    QCOMPARE(doc.analysis().outputShape, (netsmith::Shape{5}));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    for (const auto& n : doc.project().model.nodes)
      QVERIFY(!n.frozen);

    const QString refused = tmp.filePath(QStringLiteral("up.netsmith.json"));
    QVERIFY(!window.files()->importModel(tmp.filePath(QStringLiteral("upsample.onnx")), refused));
    QVERIFY2(window.files()->lastError().contains(QStringLiteral("(Resize)")) &&
                 window.files()->lastError().contains(QStringLiteral("nothing was written")),
             qPrintable(window.files()->lastError()));
    QVERIFY(!QFileInfo::exists(refused));
    QCOMPARE(window.document()->filePath(), target);
  }

 private:
  /// On every page of `window` as it is sized now, no widget reaches past the window (what
  /// does not fit scrolls inside its own scroll area).
  void checkEveryPageFits(MainWindow& window) {
    const QRect inside = window.rect();
    for (int page = 0; page < window.pages()->navigator()->count(); ++page) {
      window.pages()->showPage(ProjectPages::Page(page));
      QApplication::processEvents();
      QStringList past;
      for (auto* w : window.findChildren<QWidget*>()) {
        if (!w->isVisible() || w->isWindow()) continue;
        bool scrolled = false;  // clipped by a scroll area by design
        for (QWidget* p = w->parentWidget(); p && p != &window; p = p->parentWidget())
          if (qobject_cast<QAbstractScrollArea*>(p)) scrolled = true;
        if (scrolled) continue;
        const QRect r(w->mapTo(&window, QPoint(0, 0)), w->size());
        if (!inside.contains(r))
          past << QStringLiteral("%1 %2 at %3,%4 %5x%6")
                      .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
                      .arg(r.x())
                      .arg(r.y())
                      .arg(r.width())
                      .arg(r.height());
      }
      QVERIFY2(past.isEmpty(),
               qPrintable(QStringLiteral("%1 px wide, page %2: ").arg(window.width()).arg(page) +
                          past.join(QStringLiteral("; "))));
    }
  }

  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
};

QTEST_MAIN(StudioLayoutTest)
#include "studio_layout_test.moc"
