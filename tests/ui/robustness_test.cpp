// The studio under real input: clicks on spin arrows, typing then Tab or Enter, choices from
// drop-downs, wheel turns over fields that do not have focus, on every form of every page, for the
// default project, the imported ResNet-18 and a blank project. The studio must stay alive and the
// project must hold exactly the value the person entered. Then a seeded random-input ("monkey")
// run per page; NETSMITH_MONKEY_EVENTS sets its length, NETSMITH_MONKEY_SEED its seed (1 by
// default, "random" for a new one; the seed is printed).
#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QRandomGenerator>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>

#include <cmath>
#include <set>

#include "../core/train_fixtures.h"
#include "augment/transform.h"
#include "editor/graph_canvas.h"
#include "editor/model_editor.h"
#include "editor/model_page.h"
#include "editor/node_inspector.h"
#include "forms/augment_page.h"
#include "forms/training_page.h"
#include "input_driver.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/main_window.h"
#include "shell/project_files.h"
#include "shell/project_pages.h"
#include "ui_test_support.h"
#include "util/schema_form.h"

using netsmith::Json;
using netsmith::ui::MainWindow;
using netsmith::ui::ProjectPages;
using netsmith::ui::SchemaForm;
using namespace netsmith::uitest;

namespace {

QString templatePath(const char* name) {
  return QStringLiteral(NETSMITH_SOURCE_DIR "/resources/templates/") + QLatin1String(name);
}

/// The value at a dotted path ("train.optimizer.lr") of the project; null when absent.
Json valueAt(const netsmith::project::Project& project, const QString& dotted) {
  QStringList parts = dotted.split(QLatin1Char('.'));
  const QString section = parts.takeFirst();
  Json v = section == QLatin1String("train")   ? project.train
           : section == QLatin1String("data")  ? project.data
           : section == QLatin1String("sweep") ? project.extra.value("sweep", Json())
                                               : Json();
  for (const auto& p : parts) {
    if (!v.is_object() || !v.contains(p.toStdString())) return Json();
    v = v[p.toStdString()];
  }
  return v;
}

bool sameNumber(const Json& stored, double expected) {
  const Json& v = stored.is_array() && !stored.empty() ? stored[0] : stored;
  return v.is_number() &&
         std::abs(v.get<double>() - expected) <= 1e-9 * std::max(1.0, std::abs(expected));
}

QString dump(const Json& v) {
  return QString::fromStdString(v.dump());
}

/// A value to type into a number field: inside the field's range, unlike the one shown.
double valueToType(double lo, double hi, double shown, bool integer) {
  const double candidates[] = {0.37, 0.5, 1.5, 3, 7, lo + (hi - lo) * 0.37, shown + 1, lo};
  for (double c : candidates) {
    if (integer) c = std::round(c);
    if (c >= lo && c <= hi && c != shown && std::abs(c) < 1e8) return c;
  }
  return shown;
}

/// The keyword drop-down beside a number or list field ("value", "auto", ...), if any.
QComboBox* keywordBox(QWidget* field) {
  QWidget* host = field->parentWidget();
  if (!host) return nullptr;
  for (auto* combo : host->findChildren<QComboBox*>(QString(), Qt::FindDirectChildrenOnly))
    if (combo != field) return combo;  // a drop-down field is not its own keyword box
  return nullptr;
}

}  // namespace

class RobustnessTest : public QObject {
  Q_OBJECT

 public:
  /// Where a form's fields are stored, and the form (looked up again after every input: an edit
  /// may rebuild it).
  struct FormUnderTest {
    QString where;  ///< for messages
    std::function<SchemaForm*()> form;
    std::function<Json(const QString& key)> stored;
  };

 private:
  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
  int m_fieldsEdited = 0;
  int m_inputsSent = 0;

  std::unique_ptr<MainWindow> openWindow(const QString& project) {
    auto window = std::make_unique<MainWindow>(m_registries);
    window->resize(1280, 720);
    window->show();
    QApplication::setActiveWindow(window.get());
    if (!QTest::qWaitForWindowActive(window.get())) qWarning("window not active");
    if (!project.isEmpty() && !window->openProject(project, true))
      qWarning("cannot open %s", qPrintable(project));
    settle();
    return window;
  }

  /// Every field of `t`'s form, with real input; the project must hold what was entered.
  void editEveryField(const FormUnderTest& t) {
    SchemaForm* form = t.form();
    QVERIFY2(form, qPrintable(t.where));
    for (const QString& key : form->keys()) {
      editField(t, key);
      if (QTest::currentTestFailed()) return;
    }
  }

  void editField(const FormUnderTest& t, const QString& key) {
    const QString where = t.where + QLatin1Char('.') + key;
    auto field = [&] { return t.form() ? t.form()->field(key) : nullptr; };
    QVERIFY2(field(), qPrintable(where + ": no field"));
    field()->window()->activateWindow();
    // A keyword in force ("auto") disables the number: back to "value" first.
    if (QComboBox* keywords = keywordBox(field()); keywords && !field()->isEnabled()) {
      chooseItem(keywords, 0);
      ++m_inputsSent;
      QVERIFY2(field() && field()->isEnabled(), qPrintable(where + ": \"value\" not chosen"));
    }
    if (auto* spin = qobject_cast<QAbstractSpinBox*>(field())) {
      const bool integer = qobject_cast<QSpinBox*>(spin) != nullptr;
      auto shown = [&] {
        auto* s = t.form()->field(key);
        return integer ? double(qobject_cast<QSpinBox*>(s)->value())
                       : qobject_cast<QDoubleSpinBox*>(s)->value();
      };
      double lo = integer ? qobject_cast<QSpinBox*>(spin)->minimum()
                          : qobject_cast<QDoubleSpinBox*>(spin)->minimum();
      const double hi = integer ? qobject_cast<QSpinBox*>(spin)->maximum()
                                : qobject_cast<QDoubleSpinBox*>(spin)->maximum();
      if (!spin->specialValueText().isEmpty()) lo += 1;  // the blank "not set" value
      // The up arrow (the down arrow at the top of the range): the project holds what shows.
      const bool up = shown() < hi;
      clickArrow(spin, up);
      ++m_inputsSent;
      QVERIFY2(field(), qPrintable(where + ": the field is gone after an arrow click"));
      if (shown() >= lo)
        QVERIFY2(sameNumber(t.stored(key), shown()),
                 qPrintable(QStringLiteral("%1: shows %2, the project holds %3")
                                .arg(where)
                                .arg(shown())
                                .arg(dump(t.stored(key)))));
      // Typed, then Tab; typed again, then Enter.
      for (Qt::Key end : {Qt::Key_Tab, Qt::Key_Return}) {
        const double v = valueToType(lo, hi, shown(), integer);
        const QString text = QString::number(v, 'g', 10);
        typeInto(field(), text, end);
        m_inputsSent += int(text.size()) + 3;
        QVERIFY2(field(), qPrintable(where + ": the field is gone after typing"));
        QVERIFY2(sameNumber(t.stored(key), v),
                 qPrintable(QStringLiteral("%1: typed %2, the project holds %3")
                                .arg(where, text, dump(t.stored(key)))));
      }
    } else if (auto* check = qobject_cast<QCheckBox*>(field())) {
      const bool before = check->isChecked();
      clickCheck(check);
      ++m_inputsSent;
      QVERIFY2(t.stored(key) == Json(!before),
               qPrintable(where + ": the project holds " + dump(t.stored(key))));
    } else if (auto* combo = qobject_cast<QComboBox*>(field())) {
      if (combo->count() < 2) return;
      const int next = (combo->currentIndex() + 1) % combo->count();
      const QString text = combo->itemText(next);
      chooseItem(combo, next);
      m_inputsSent += next + 3;
      QVERIFY2(
          t.stored(key) == Json(text.toStdString()),
          qPrintable(where + ": chose " + text + ", the project holds " + dump(t.stored(key))));
      if (combo->isEditable()) {
        // A name typed in (a task's figure for a metric): Enter sends it as typed.
        const QString typed = QStringLiteral("train_loss");
        typeInto(combo->lineEdit(), typed, Qt::Key_Return);
        m_inputsSent += int(typed.size()) + 3;
        QVERIFY2(
            t.stored(key) == Json(typed.toStdString()),
            qPrintable(where + ": typed " + typed + ", the project holds " + dump(t.stored(key))));
      }
    } else if (auto* edit = qobject_cast<QLineEdit*>(field())) {
      // The list shown (or the default), typed again with its first number changed.
      Json v = Json::array({0.25, 0.75});
      try {
        const Json shown = Json::parse(edit->text().toStdString());
        if (shown.is_array() && !shown.empty() && shown[0].is_number()) v = shown;
      } catch (const std::exception&) {
      }
      const auto spec = t.form()->spec(key);
      double lo = spec.min ? *spec.min : 0.0, hi = spec.max ? *spec.max : 1.0;
      v[0] =
          valueToType(lo, std::min(hi, v.size() > 1 && v[1].is_number() ? v[1].get<double>() : hi),
                      v[0].get<double>(), false);
      const QString text = dump(v);
      typeInto(edit, text, Qt::Key_Tab);
      m_inputsSent += int(text.size()) + 3;
      QVERIFY2(t.stored(key) == v, qPrintable(where + ": typed " + text + ", the project holds " +
                                              dump(t.stored(key))));
    } else {
      QFAIL(qPrintable(where + ": a field of an unknown kind"));
    }
    // A keyword field can go back to its keyword.
    if (QComboBox* keywords = field() ? keywordBox(field()) : nullptr) {
      chooseItem(keywords, 1);
      ++m_inputsSent;
      const Json stored = t.stored(key);
      QVERIFY2(stored == Json(keywords->itemText(1).toStdString()),
               qPrintable(where + ": chose " + keywords->itemText(1) + ", the project holds " +
                          dump(stored)));
    }
    ++m_fieldsEdited;
  }

  /// Every field of the Training page: each optimizer and each schedule, the trainer options
  /// and the optional sections (switched on by their check box).
  void driveTrainingPage(MainWindow& window) {
    auto* page = window.pages()->trainingPage();
    window.pages()->showPage(ProjectPages::TrainingPage);
    settle();
    auto* doc = window.document();
    const auto formAt = [page](int i) {
      return [page, i] { return page->forms().value(i).second; };
    };
    const auto storedAt = [doc, page](int i) {
      return [doc, page, i](const QString& key) {
        return valueAt(doc->project(), page->forms().value(i).first + key);
      };
    };
    for (const QString& section : {QStringLiteral("early_stopping"), QStringLiteral("plateau")}) {
      if (!page->sectionSwitch(section)->isChecked()) clickCheck(page->sectionSwitch(section));
      QVERIFY2(valueAt(doc->project(), "train." + section).is_object(), qPrintable(section));
    }
    for (int i = 0; i < page->forms().size(); ++i) {
      if (page->forms()[i].first == QLatin1String("train.optimizer.") ||
          page->forms()[i].first == QLatin1String("train.schedule."))
        continue;  // below, once per type
      editEveryField(
          {page->forms()[i].first + page->forms()[i].second->objectName(), formAt(i), storedAt(i)});
      if (QTest::currentTestFailed()) return;
    }
    for (auto [type, index] : {std::pair{page->optimizerType(), 1}, {page->scheduleType(), 2}}) {
      for (int t = 0; t < type->count(); ++t) {
        const QString name = type->itemText(t);
        chooseItem(type, t);
        QVERIFY2(type->currentText() == name, qPrintable(name));
        editEveryField({page->forms()[index].first + name, formAt(index), storedAt(index)});
        if (QTest::currentTestFailed()) return;
      }
    }
  }

  /// Every transform of the registry added, selected with a click in the list, every field
  /// edited.
  void driveAugmentPage(MainWindow& window) {
    auto* page = window.pages()->augmentPage();
    window.pages()->showPage(ProjectPages::AugmentPage);
    settle();
    auto* doc = window.document();
    const auto registries = netsmith::Registries::builtins();
    const auto& transforms = registries->transforms;
    for (const auto& name : transforms.names())
      page->addTransform(QString::fromStdString(name));
    settle();
    const int rows = page->list()->count();
    QVERIFY(rows >= int(transforms.names().size()));
    for (int row = 0; row < rows; ++row) {
      QListWidgetItem* item = page->list()->item(row);
      page->list()->scrollToItem(item);
      const QRect r = page->list()->visualItemRect(item);
      QTest::mouseClick(page->list()->viewport(), Qt::LeftButton, {},
                        QPoint(r.right() - 10, r.center().y()));
      settle();
      QCOMPARE(page->list()->currentRow(), row);
      const QString name = QString::fromStdString(
          doc->project().augment[std::size_t(row)]["transform"].get<std::string>());
      editEveryField(
          {QStringLiteral("augment[%1 %2]").arg(row).arg(name), [page] { return page->form(); },
           [doc, row](const QString& key) {
             const Json& entry = doc->project().augment[std::size_t(row)];
             return entry.contains(key.toStdString()) ? entry[key.toStdString()] : Json();
           }});
      if (QTest::currentTestFailed()) return;
    }
  }

  /// Every node whose op has parameters, one per op, selected with a click on the canvas; every
  /// field of the inspector edited.
  void driveInspector(MainWindow& window) {
    auto* page = window.pages()->modelPage();
    window.pages()->showPage(ProjectPages::ModelPage);
    settle();
    auto* doc = window.document();
    std::set<std::string> ops;
    std::vector<std::string> ids;
    for (const auto& n : doc->project().model.nodes)
      if (ops.insert(n.op).second) ids.push_back(n.id);
    for (const auto& id : ids) {
      auto* canvas = page->canvas();
      const QString qid = QString::fromStdString(id);
      canvas->selectNodes({}, false);
      const QPointF centre =
          canvas->inputPort(qid) + QPointF(0, netsmith::ui::GraphCanvas::kNodeHeight / 2);
      canvas->centerOn(centre);
      QTest::mouseClick(canvas->viewport(), Qt::LeftButton, {}, canvas->mapFromScene(centre));
      settle();
      QVERIFY2(canvas->selectedIds() == QStringList{qid}, qPrintable(qid));
      auto form = [page] { return page->inspector()->findChild<SchemaForm*>("nodeParams"); };
      QVERIFY2(form(), qPrintable(qid));
      editEveryField(
          {QStringLiteral("model.nodes[%1]").arg(qid), form, [doc, id](const QString& key) {
             const auto* n = doc->project().model.find(id);
             return n && n->params.contains(key.toStdString()) ? n->params[key.toStdString()]
                                                               : Json();
           }});
      if (QTest::currentTestFailed()) return;
    }
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_robustness_tests"));
  }

  void cleanupTestCase() {
    qInfo("robustness: %d fields edited, %d inputs sent", m_fieldsEdited, m_inputsSent);
  }

  // The Augment page's crash: one click on the up arrow of HorizontalFlip's p, and a changed
  // RandomRotation degrees ended with Tab or Enter, killed the studio (the form was rebuilt
  // inside the spin box's own event). Now the edit lands and the same field keeps focus.
  void augmentArrowAndTypedDegreesKeepTheStudioAlive() {
    QTemporaryDir dir;
    const QString path = dir.filePath("p.netsmith.json");
    auto project = netsmith::project::loadProject(example().toStdString()).project;
    project.augment = Json::parse(
        R"([{"transform": "HorizontalFlip"}, {"transform": "RandomRotation", "degrees": 10}])");
    netsmith::project::saveProject(project, path.toStdString());
    auto window = openWindow(path);
    auto* page = window->pages()->augmentPage();
    window->pages()->showPage(ProjectPages::AugmentPage);
    settle();
    page->selectRow(0);
    settle();
    auto* p = qobject_cast<QDoubleSpinBox*>(page->form()->field("p"));
    QVERIFY(p);
    const double before = p->value();
    clickArrow(p, true);
    QCOMPARE(page->form()->field("p"), static_cast<QWidget*>(p));  // the same widget, alive
    QVERIFY(sameNumber(window->document()->project().augment[0]["p"], before + 0.01));
    clickArrow(p, true);
    QVERIFY(sameNumber(window->document()->project().augment[0]["p"], before + 0.02));
    page->selectRow(1);
    settle();
    for (auto [text, end] : {std::pair{QStringLiteral("25"), Qt::Key_Tab},
                             std::pair{QStringLiteral("40"), Qt::Key_Return}}) {
      auto* degrees = page->form()->field("degrees");
      QVERIFY(degrees);
      typeInto(degrees, text, end);
      QCOMPARE(window->document()->project().augment[1]["degrees"], Json(text.toInt()));
    }
    // Edits of one field merge into one undo step: undo takes them back together.
    window->document()->undoStack()->undo();
    QCOMPARE(window->document()->project().augment[1]["degrees"], Json(10));
    // The preview followed every edit from the data it opened once.
    const int shown = page->previewCount();
    page->reroll();
    QVERIFY(QTest::qWaitFor([&] { return page->previewCount() > shown; }, 60000));
    QVERIFY2(page->previewError().isEmpty(), qPrintable(page->previewError()));
    QCOMPARE(page->previewDataOpens(), 1);
  }

  // A wheel turn over the Training form scrolls it, and never changes the number field under the
  // pointer unless that field has focus.
  void wheelOverUnfocusedFieldsScrollsTheForm() {
    auto window = openWindow(example());
    auto* page = window->pages()->trainingPage();
    window->pages()->showPage(ProjectPages::TrainingPage);
    settle();
    auto* eps = qobject_cast<QDoubleSpinBox*>(page->form("optimizer")->field("eps"));
    QVERIFY(eps);
    auto* scroll = page->findChild<QScrollArea*>();
    QVERIFY(scroll);
    scroll->ensureWidgetVisible(eps);
    settle();
    const Json train = window->document()->project().train;
    const int scrolled = scroll->verticalScrollBar()->value();
    QVERIFY(!eps->hasFocus());
    for (int i = 0; i < 3; ++i)
      turnWheel(eps, eps->rect().center(), -1);
    QCOMPARE(window->document()->project().train, train);
    QVERIFY2(scroll->verticalScrollBar()->value() > scrolled, "the form did not scroll");
    QCOMPARE(window->document()->undoStack()->count(), 0);
    // With focus (a click in it), the wheel steps the field as before.
    auto* epochs = qobject_cast<QSpinBox*>(page->form("basics")->field("epochs"));
    QVERIFY(epochs);
    scroll->ensureWidgetVisible(epochs);
    QTest::mouseClick(epochs, Qt::LeftButton, {}, QPoint(6, epochs->height() / 2));
    QVERIFY(epochs->hasFocus());
    const int before = epochs->value();
    turnWheel(epochs, epochs->rect().center(), 1);
    QCOMPARE(window->document()->project().train["epochs"], Json(before + 1));
  }

  // one_cycle's max_lr is "auto" in the project: the field says auto (showing the optimizer's
  // lr), a number can be chosen, and auto again; no drop-down is drawn outside its row.
  void keywordDecimalFieldsKeepTheirKeyword() {
    QTemporaryDir dir;
    const QString path = dir.filePath("p.netsmith.json");
    auto project = netsmith::project::loadProject(example().toStdString()).project;
    project.train["schedule"] = Json{{"type", "one_cycle"}, {"max_lr", "auto"}};
    project.train["optimizer"]["lr"] = 0.002;
    netsmith::project::saveProject(project, path.toStdString());
    auto window = openWindow(path);
    auto* page = window->pages()->trainingPage();
    window->pages()->showPage(ProjectPages::TrainingPage);
    settle();
    auto* maxLr = qobject_cast<QDoubleSpinBox*>(page->form("schedule")->field("max_lr"));
    QVERIFY(maxLr);
    QComboBox* keywords = keywordBox(maxLr);
    QVERIFY(keywords);
    QCOMPARE(keywords->currentText(), QStringLiteral("auto"));
    QVERIFY(!maxLr->isEnabled());
    QCOMPARE(maxLr->value(), 0.002);
    QVERIFY(keywords->isVisible());
    // Every drop-down of the form sits inside a row, beside its field (none over a label).
    for (auto* combo : page->form("schedule")->findChildren<QComboBox*>())
      QVERIFY(combo->parentWidget() != page->form("schedule"));
    chooseItem(keywords, 0);
    QVERIFY(maxLr->isEnabled());
    QVERIFY(sameNumber(window->document()->project().train["schedule"]["max_lr"], 0.002));
    typeInto(maxLr, QStringLiteral("0.01"));
    QVERIFY(sameNumber(window->document()->project().train["schedule"]["max_lr"], 0.01));
    chooseItem(keywordBox(page->form("schedule")->field("max_lr")), 1);
    QCOMPARE(window->document()->project().train["schedule"]["max_lr"], Json("auto"));
    QVERIFY(window->document()->save());
    QCOMPARE(netsmith::project::loadProject(path.toStdString()).project.train["schedule"]["max_lr"],
             Json("auto"));
  }

  // Start follows the document on every change: a model made valid enables it before any save,
  // deleting a node disables it, a missing data folder disables it before the press.
  void startFollowsTheDocumentOnEveryChange() {
    QTemporaryDir dir;
    const QString path = dir.filePath("p.netsmith.json");
    // The default project with its learning-rate sweep: Start and the sweep's Run alike.
    auto project =
        netsmith::project::loadProject(NETSMITH_SOURCE_DIR
                                       "/resources/examples/fashion_mnist_lr_sweep.netsmith.json")
            .project;
    netsmith::project::saveProject(project, path.toStdString());
    auto window = openWindow(path);
    auto* start = action(*window, "actionTrainStart");
    auto* doc = window->document();
    auto* runSweep = window->findChild<QPushButton*>(QStringLiteral("sweepRun"));
    QVERIFY(start->isEnabled());
    QVERIFY(runSweep && runSweep->isEnabled());
    // The data's class count is read in the background; the head is checked against it.
    QVERIFY(QTest::qWaitFor([&] { return doc->dataClasses() > 0; }, 60000));
    auto* editor = window->pages()->modelPage()->editor();
    // Deleting a node in the middle leaves the next one without its input.
    const std::string middle = doc->project().model.nodes[3].id;
    const auto before = doc->project().model;
    editor->removeNodes({QString::fromStdString(middle)});
    QVERIFY2(!doc->problems().empty(), "no problem after deleting a node");
    QVERIFY(!start->isEnabled());
    QVERIFY(!runSweep->isEnabled());
    QVERIFY(!window->pages()->trainingPage()->blockedReason().isEmpty());
    // Undo (a model edit, not a save) makes it valid again: Start follows.
    doc->undoStack()->undo();
    QCOMPARE(doc->project().model, before);
    QVERIFY(doc->problems().empty());
    QVERIFY2(start->isEnabled(), qPrintable(start->toolTip()));
    QVERIFY(runSweep->isEnabled());
    QVERIFY(doc->isModified() == false);
    // A data folder that is not there: Start is off with the place named.
    Json data = doc->project().data;
    data["train"]["images"] = (dir.path() + "/missing/train-images.gz").toStdString();
    doc->editSection(QStringLiteral("data"), data, QStringLiteral("data"));
    QVERIFY(!start->isEnabled());
    QVERIFY2(start->toolTip().contains(QStringLiteral("data.train.images")),
             qPrintable(start->toolTip()));
    QVERIFY(!runSweep->isEnabled());
    doc->undoStack()->undo();
    QVERIFY(start->isEnabled());
    QVERIFY(runSweep->isEnabled());
  }

  // The Training page's quick run: 64 training samples typed into its field, then Start: the
  // plan and the run's own records count 2 steps an epoch (64 / batch 32), not the 6 of the
  // whole split (192); the field is not saved in the project.
  void quickRunTrainsOnTheTypedSubset() {
    netsmith::testutil::TempDir dir;
    const QString path =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}}));
    auto window = openWindow(path);
    auto* page = window->pages()->trainingPage();
    window->pages()->showPage(ProjectPages::TrainingPage);
    QVERIFY(QTest::qWaitFor([&] { return page->stepsPerEpoch() > 0; }, 30000));
    QCOMPARE(page->stepsPerEpoch(), std::int64_t(6));
    auto* field = page->trainLimitField();
    page->findChild<QScrollArea*>()->ensureWidgetVisible(field);
    typeInto(field, QStringLiteral("64"), Qt::Key_Return);
    QCOMPARE(page->stepsPerEpoch(), std::int64_t(2));
    QSignalSpy finished(window->session(), &netsmith::ui::TrainerSession::finished);
    action(*window, "actionTrainStart")->trigger();
    QVERIFY(finished.wait(60000));
    const QDir runsDir(QString::fromStdString(dir.file("runs")));
    const QStringList runs = runsDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(runs.size(), 1);
    QFile csv(runsDir.filePath(runs[0] + QStringLiteral("/metrics.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    int steps = 0;
    while (!csv.atEnd())
      if (csv.readLine().startsWith("step,")) ++steps;
    QCOMPARE(steps, 2);
    QVERIFY(!window->document()->isModified());
  }

  void everyFieldTakesRealInput_data() {
    QTest::addColumn<QString>("source");
    QTest::newRow("default project") << example();
    QTest::newRow("imported ResNet-18") << templatePath("resnet18.netsmith.json");
    QTest::newRow("blank project") << QString();
  }

  // Every field of every form (training, each transform, each op in the inspector) edited with
  // real input: the studio stays alive and the project holds the value entered.
  void everyFieldTakesRealInput() {
    QFETCH(QString, source);
    QTemporaryDir dir;
    const QString path = dir.filePath("p.netsmith.json");
    std::unique_ptr<MainWindow> window;
    if (source.isEmpty()) {
      window = openWindow(QString());
      QVERIFY(window->files()->createBlankProject(path));
      // One node of every op, each after the one before.
      auto* page = window->pages()->modelPage();
      for (const auto& op : m_registry.names())
        if (op != "Input") page->appendOp(QString::fromStdString(op));
      settle();
      QVERIFY(window->document()->project().model.nodes.size() >= m_registry.names().size() - 1);
    } else {
      QVERIFY(QFile::copy(source, path));
      window = openWindow(path);
    }
    QVERIFY(!window->document()->filePath().isEmpty());
    driveInspector(*window);
    if (QTest::currentTestFailed()) return;
    driveTrainingPage(*window);
    if (QTest::currentTestFailed()) return;
    driveAugmentPage(*window);
    if (QTest::currentTestFailed()) return;
    // Everything entered is what the saved file holds.
    QVERIFY(window->document()->save());
    const auto saved = netsmith::project::loadProject(path.toStdString()).project;
    QCOMPARE(saved.train, window->document()->project().train);
    QCOMPARE(saved.augment, window->document()->project().augment);
    QCOMPARE(saved.model, window->document()->project().model);
  }

  // Seeded random input on every page: clicks, double clicks, typing, wheel turns, drags. The
  // studio must stay alive and the document consistent with its undo stack.
  void monkey() {
    const int events = qEnvironmentVariableIsSet("NETSMITH_MONKEY_EVENTS")
                           ? qEnvironmentVariableIntValue("NETSMITH_MONKEY_EVENTS")
                           : 400;
    // CI replays one seed (a landing never depends on the luck of the draw);
    // NETSMITH_MONKEY_SEED=N replays N, NETSMITH_MONKEY_SEED=random draws one.
    const QByteArray chosen = qgetenv("NETSMITH_MONKEY_SEED");
    const quint32 seed = chosen.isEmpty() ? 1u
                         : chosen == "random"
                             ? quint32(QDateTime::currentMSecsSinceEpoch() & 0x7fffffff)
                             : quint32(chosen.toUInt());
    qInfo("monkey: seed %u, %d events per page (NETSMITH_MONKEY_SEED=%u replays it)", seed, events,
          seed);
    // Small generated data (256 images): the scans, previews and statistics the monkey sets off
    // finish in moments, so the run stays short and its length does not hang on the seed.
    netsmith::testutil::TempDir dir;
    auto window = openWindow(QString::fromStdString(netsmith::testutil::writeTrainProject(dir)));
    // Dialogs and menus that a click opens are closed again, as a person would.
    QTimer closer;
    connect(&closer, &QTimer::timeout, [] {
      if (QWidget* popup = QApplication::activePopupWidget()) popup->close();
      if (QWidget* modal = QApplication::activeModalWidget()) modal->close();
    });
    closer.start(30);
    QRandomGenerator random(seed);
    const Qt::Key keys[] = {Qt::Key_0,      Qt::Key_1,     Qt::Key_5,      Qt::Key_Period,
                            Qt::Key_Minus,  Qt::Key_E,     Qt::Key_A,      Qt::Key_Tab,
                            Qt::Key_Return, Qt::Key_Up,    Qt::Key_Down,   Qt::Key_Backspace,
                            Qt::Key_Delete, Qt::Key_Space, Qt::Key_Escape, Qt::Key_Home};
    int sent = 0;
    QElapsedTimer clock;
    clock.start();
    const int pages = window->pages()->navigator()->count();
    for (int p = 0; p < pages; ++p) {
      window->pages()->showPage(ProjectPages::Page(p));
      settle();
      QWidget* root = window->pages();
      for (int e = 0; e < events; ++e) {
        const QPoint at(int(random.bounded(root->width())), int(random.bounded(root->height())));
        QWidget* target = root->childAt(at);
        if (!target) target = root;
        const QPoint local = target->mapFrom(root, at);
        // Buttons that start long work (training, an LR search, a sweep, an export) are left
        // alone; everything else takes the input.
        if (auto* button = qobject_cast<QPushButton*>(target); button && button->isVisible())
          continue;
        const quint32 kind = random.bounded(10u);
        if (kind < 3) {
          QTest::mouseClick(target, Qt::LeftButton, {}, local);
        } else if (kind < 4) {
          QTest::mouseDClick(target, Qt::LeftButton, {}, local);
        } else if (kind < 6) {
          turnWheel(target, local, random.bounded(2u) ? 1 : -1);
        } else if (kind < 9) {
          QWidget* focus = QApplication::focusWidget();
          if (qobject_cast<QPushButton*>(focus)) continue;  // Space would press it
          QTest::keyClick(focus ? focus : target, keys[random.bounded(quint32(std::size(keys)))]);
        } else {
          const QPoint to =
              local + QPoint(int(random.bounded(80u)) - 40, int(random.bounded(80u)) - 40);
          QTest::mousePress(target, Qt::LeftButton, {}, local);
          QTest::mouseMove(target, (local + to) / 2);
          QTest::mouseMove(target, to);
          QTest::mouseRelease(target, Qt::LeftButton, {}, to);
        }
        ++sent;
        if (e % 20 == 0) settle();
      }
      settle();
      qInfo("monkey: page %d done after %lld ms", p, (long long)clock.elapsed());
      // The document is consistent: undo all, redo all, and the project is the same.
      const auto now = window->document()->project();
      auto* undo = window->document()->undoStack();
      const int index = undo->index();
      undo->setIndex(0);
      undo->setIndex(index);
      QVERIFY2(window->document()->project().train == now.train &&
                   window->document()->project().augment == now.augment &&
                   window->document()->project().model == now.model,
               qPrintable(QStringLiteral("page %1: undo then redo changed the project (seed %2)")
                              .arg(p)
                              .arg(seed)));
    }
    if (window->session()->isRunning()) window->session()->stop();
    m_inputsSent += sent;
    qInfo("monkey: %d events on %d pages, %d edits on the undo stack", sent, pages,
          window->document()->undoStack()->count());
  }
};

QTEST_MAIN(RobustnessTest)
#include "robustness_test.moc"
