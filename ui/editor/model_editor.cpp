#include "editor/model_editor.h"

#include <QRegularExpression>
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "editor/graph_canvas.h"
#include "graph/graph_analysis.h"
#include "graph/model_edits.h"
#include "session/project_document.h"

namespace netsmith::ui {

namespace {

constexpr double kRowGap = 80.0;
constexpr double kColumnGap = 190.0;

const std::map<std::string, std::string>& idPrefixes() {
  static const std::map<std::string, std::string> m = {
      {"Input", "input"},        {"Conv2d", "conv"},         {"BatchNorm2d", "bn"},
      {"ReLU", "relu"},          {"LeakyReLU", "lrelu"},     {"GELU", "gelu"},
      {"SiLU", "silu"},          {"ReLU6", "relu6"},         {"Hardsigmoid", "hsigmoid"},
      {"Hardswish", "hswish"},   {"ZeroPad2d", "pad"},       {"Sigmoid", "sigmoid"},
      {"Tanh", "tanh"},          {"Softmax", "softmax"},     {"MaxPool2d", "pool"},
      {"AvgPool2d", "avgpool"},  {"Linear", "fc"},           {"Dropout", "drop"},
      {"Dropout2d", "drop"},     {"Flatten", "flatten"},     {"Add", "add"},
      {"Concat", "concat"},      {"GlobalAvgPool2d", "gap"}, {"AdaptiveAvgPool2d", "gap"},
      {"ConvTranspose2d", "up"}, {"Upsample", "up"}};
  return m;
}

/// Moves every node at or below `fromY` (but `except`) down by `shift`, so that an insertion
/// has room: what is below moves, nothing lands on top of another node.
void shiftBelow(graph::ModelGraph& g, double fromY, double shift, const std::string& except) {
  for (auto& n : g.nodes)
    if (n.y >= fromY && n.id != except) n.y += shift;
}

/// What a new node of `op` starts with: a convolution gets 32 3x3 filters with "same" padding,
/// a transposed convolution 32 2x2 filters that double the size.
Json startingParams(const std::string& op) {
  if (op == "Conv2d") return Json{{"out_channels", 32}, {"kernel_size", 3}, {"padding", 1}};
  if (op == "ConvTranspose2d") return Json{{"out_channels", 32}, {"kernel_size", 2}, {"stride", 2}};
  return Json::object();
}

}  // namespace

ModelEditor::ModelEditor(ProjectDocument* document, QObject* parent)
    : QObject(parent), m_document(document) {}

const graph::ModelGraph& ModelEditor::model() const {
  return m_document->project().model;
}

void ModelEditor::commit(const graph::ModelGraph& model, const QString& text,
                         const QString& mergeKey) {
  m_document->editModel(model, text, mergeKey);
}

QString ModelEditor::freshId(const QString& op) const {
  const auto it = idPrefixes().find(op.toStdString());
  std::string base = it != idPrefixes().end() ? it->second : op.toLower().toStdString();
  base.erase(std::remove_if(
                 base.begin(), base.end(),
                 [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_'; }),
             base.end());
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "node" + base;
  const bool plainFirst = base == "input" || base == "flatten";
  if (plainFirst && !model().find(base)) return QString::fromStdString(base);
  for (int n = plainFirst ? 2 : 1;; ++n) {
    const std::string id = base + std::to_string(n);
    if (!model().find(id)) return QString::fromStdString(id);
  }
}

bool ModelEditor::reachable(const graph::ModelGraph& g, const std::string& from,
                            const std::string& to) const {
  // Is `to` reachable from `from` following edges input -> consumer?
  std::set<std::string> seen;
  std::vector<std::string> stack{from};
  while (!stack.empty()) {
    const std::string id = stack.back();
    stack.pop_back();
    if (id == to) return true;
    if (!seen.insert(id).second) continue;
    for (const auto& c : g.consumers(id))
      stack.push_back(c);
  }
  return false;
}

QString ModelEditor::addNode(const QString& op, QPointF pos, const QString& after, QString* why) {
  const auto* def = m_document->registry().find(op.toStdString());
  if (!def) {
    if (why) *why = tr("unknown op \"%1\"").arg(op);
    return {};
  }
  graph::ModelGraph g = model();
  if (def->isSource && std::any_of(g.nodes.begin(), g.nodes.end(),
                                   [&](const graph::Node& n) { return n.op == def->name; })) {
    if (why) *why = tr("the model already has an %1 node").arg(op);
    return {};
  }
  graph::Node node;
  node.id = freshId(op).toStdString();
  node.op = def->name;
  node.x = pos.x();
  node.y = pos.y();
  node.params = startingParams(node.op);
  const graph::Node* prev = after.isEmpty() ? nullptr : g.find(after.toStdString());
  // A Linear appended at the model's output is the new output: one unit per class.
  if (prev && node.op == "Linear" && m_document->dataClasses() > 0 &&
      m_document->analysis().outputId == prev->id)
    node.params["out_features"] = m_document->dataClasses();
  if (prev && !def->isSource && def->maxInputs != 0) {
    // Take over the consumers of `after`, then read from it.
    for (auto& n : g.nodes)
      for (auto& in : n.inputs)
        if (in == prev->id) in = node.id;
    if (g.output == prev->id) g.output = node.id;
    node.inputs.push_back(prev->id);
    if (pos.isNull()) {
      node.x = prev->x;
      node.y = prev->y + kRowGap;
      // Push everything below down one row, so the chain stays readable.
      shiftBelow(g, node.y - 1e-9, kRowGap, prev->id);
    }
  }
  g.nodes.push_back(node);
  commit(g, tr("Add %1").arg(QString::fromStdString(node.id)));
  return QString::fromStdString(node.id);
}

bool ModelEditor::connectNodes(const QString& fromId, const QString& toId, QString* why) {
  graph::ModelGraph g = model();
  const std::string from = fromId.toStdString(), to = toId.toStdString();
  graph::Node* target = g.find(to);
  if (!g.find(from) || !target) {
    if (why) *why = tr("no such node");
    return false;
  }
  if (from == to) {
    if (why) *why = tr("a node cannot feed itself");
    return false;
  }
  const auto* def = m_document->registry().find(target->op);
  if (def && def->isSource) {
    if (why) *why = tr("%1 is the model input: it takes no inputs").arg(toId);
    return false;
  }
  if (std::find(target->inputs.begin(), target->inputs.end(), from) != target->inputs.end()) {
    if (why) *why = tr("%1 already feeds %2").arg(fromId, toId);
    return false;
  }
  if (reachable(g, to, from)) {
    if (why)
      *why = tr("refused: %1 already depends on %2, so this edge would make a cycle")
                 .arg(fromId, toId);
    return false;
  }
  if (def && def->maxInputs >= 0 && int(target->inputs.size()) >= def->maxInputs) {
    if (why)
      *why = tr("%1 (%2) takes %n input(s) and has them; remove one first", nullptr, def->maxInputs)
                 .arg(toId, QString::fromStdString(target->op));
    return false;
  }
  if (reachable(g, to, from)) {
    if (why)
      *why = tr("refused: %1 already depends on %2, so this edge would make a cycle")
                 .arg(fromId, toId);
    return false;
  }
  target->inputs.push_back(from);
  commit(g, tr("Connect %1 to %2").arg(fromId, toId));
  return true;
}

bool ModelEditor::disconnectNodes(const QString& fromId, const QString& toId) {
  graph::ModelGraph g = model();
  graph::Node* target = g.find(toId.toStdString());
  if (!target) return false;
  auto& in = target->inputs;
  const auto it = std::find(in.begin(), in.end(), fromId.toStdString());
  if (it == in.end()) return false;
  in.erase(it);
  commit(g, tr("Disconnect %1 from %2").arg(fromId, toId));
  return true;
}

void ModelEditor::removeNodes(const QStringList& ids) {
  if (ids.isEmpty()) return;
  graph::ModelGraph g = model();
  std::set<std::string> gone;
  for (const auto& id : ids)
    gone.insert(id.toStdString());
  g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(),
                               [&](const graph::Node& n) { return gone.count(n.id) > 0; }),
                g.nodes.end());
  for (auto& n : g.nodes)
    n.inputs.erase(std::remove_if(n.inputs.begin(), n.inputs.end(),
                                  [&](const std::string& in) { return gone.count(in) > 0; }),
                   n.inputs.end());
  if (gone.count(g.output)) g.output.clear();
  commit(g, ids.size() == 1 ? tr("Delete %1").arg(ids[0])
                            : tr("Delete %n nodes", nullptr, int(ids.size())));
}

void ModelEditor::setParam(const QString& id, const QString& key, const Json& value) {
  graph::ModelGraph g = model();
  graph::Node* n = g.find(id.toStdString());
  if (!n) return;
  if (value.is_null())
    n->params.erase(key.toStdString());
  else
    n->params[key.toStdString()] = value;
  commit(g, tr("Set %1.%2").arg(id, key), QStringLiteral("param:%1:%2").arg(id, key));
}

void ModelEditor::setInputDimension(const QString& key, std::int64_t value) {
  graph::ModelGraph g = model();
  std::int64_t* field = key == QLatin1String("channels") ? &g.input.channels
                        : key == QLatin1String("height") ? &g.input.height
                        : key == QLatin1String("width")  ? &g.input.width
                                                         : nullptr;
  if (!field || *field == value) return;
  *field = value;
  commit(g, tr("Set the model input's %1").arg(key), QStringLiteral("input:%1").arg(key));
}

void ModelEditor::setInit(const QString& id, const QString& scheme) {
  graph::ModelGraph g = model();
  graph::Node* n = g.find(id.toStdString());
  if (!n) return;
  n->init = scheme == QLatin1String("default") ? std::string() : scheme.toStdString();
  commit(g, tr("Set %1 init").arg(id));
}

void ModelEditor::setFrozen(const QString& id, bool frozen) {
  graph::ModelGraph g = model();
  graph::Node* n = g.find(id.toStdString());
  if (!n) return;
  n->frozen = frozen;
  commit(g, frozen ? tr("Freeze %1").arg(id) : tr("Unfreeze %1").arg(id));
}

void ModelEditor::setLrMult(const QString& id, double mult) {
  graph::ModelGraph g = model();
  graph::Node* n = g.find(id.toStdString());
  if (!n || !(mult > 0) || mult > 1000 || n->lrMult == mult) return;
  n->lrMult = mult;
  commit(g, tr("Learning rate x%1 for %2").arg(mult).arg(id));
}

void ModelEditor::setLrMultUpTo(const QString& id, double mult) {
  graph::ModelGraph g = model();
  try {
    const auto set = graph::setLrMultUpTo(g, id.toStdString(), mult);
    commit(g, tr("Learning rate x%1 for %2 nodes up to %3").arg(mult).arg(set.size()).arg(id));
  } catch (const std::exception&) {
  }
}

void ModelEditor::freezeUpTo(const QString& id) {
  graph::ModelGraph g = model();
  try {
    const auto frozen = graph::freezeUpTo(g, id.toStdString());
    commit(g, tr("Freeze %1 nodes up to %2").arg(frozen.size()).arg(id));
  } catch (const std::exception&) {
  }
}

bool ModelEditor::replaceHead() {
  graph::ModelGraph g = model();
  const std::int64_t classes = m_document->dataClasses();
  if (classes < 1 || graph::headNode(g).empty()) return false;
  const QString head = QString::fromStdString(graph::replaceHead(g, classes));
  commit(g, tr("Replace head %1 (%2 classes)").arg(head).arg(classes));
  return true;
}

void ModelEditor::moveNodes(const QMap<QString, QPointF>& positions) {
  graph::ModelGraph g = model();
  for (auto it = positions.begin(); it != positions.end(); ++it)
    if (graph::Node* n = g.find(it.key().toStdString())) {
      n->x = it.value().x();
      n->y = it.value().y();
    }
  commit(g, positions.size() == 1 ? tr("Move %1").arg(positions.firstKey()) : tr("Move nodes"),
         QStringLiteral("move:") + QStringList(positions.keys()).join(QLatin1Char(',')));
}

QString ModelEditor::insertOnEdge(const QString& fromId, const QString& toId, const QString& op,
                                  QString* why) {
  graph::ModelGraph g = model();
  graph::Node* to = g.find(toId.toStdString());
  const graph::Node* from = g.find(fromId.toStdString());
  const auto* def = m_document->registry().find(op.toStdString());
  if (!to || !from || !def || def->isSource) {
    if (why) *why = tr("cannot insert %1 there").arg(op);
    return {};
  }
  auto it = std::find(to->inputs.begin(), to->inputs.end(), from->id);
  if (it == to->inputs.end()) {
    if (why) *why = tr("%1 does not feed %2").arg(fromId, toId);
    return {};
  }
  graph::Node node;
  node.id = freshId(op).toStdString();
  node.op = def->name;
  node.inputs = {from->id};
  node.params = startingParams(node.op);
  // The new node takes `to`'s place; `to` and everything level with or below it move down a
  // row (anything overlapping `to`'s row too).
  node.x = to->x;
  node.y = to->y;
  *it = node.id;
  shiftBelow(g, to->y - GraphCanvas::kNodeHeight, kRowGap, from->id);
  g.nodes.push_back(node);
  commit(g, tr("Insert %1").arg(QString::fromStdString(node.id)));
  return QString::fromStdString(node.id);
}

QString ModelEditor::copy(const QStringList& ids) const {
  graph::ModelGraph part;
  part.input = model().input;
  std::set<std::string> keep;
  for (const auto& id : ids)
    keep.insert(id.toStdString());
  for (const auto& n : model().nodes)
    if (keep.count(n.id)) {
      graph::Node c = n;
      c.inputs.erase(std::remove_if(c.inputs.begin(), c.inputs.end(),
                                    [&](const std::string& in) { return !keep.count(in); }),
                     c.inputs.end());
      part.nodes.push_back(c);
    }
  Json j = graph::modelToJson(part);
  j["netsmith_clipboard"] = 1;
  return QString::fromStdString(j.dump());
}

QStringList ModelEditor::paste(const QString& text, QPointF offset, QString* why) {
  Json j;
  try {
    j = Json::parse(text.toStdString());
  } catch (const std::exception&) {
    if (why) *why = tr("the clipboard holds no Netsmith nodes");
    return {};
  }
  if (!j.is_object() || !j.contains("netsmith_clipboard")) {
    if (why) *why = tr("the clipboard holds no Netsmith nodes");
    return {};
  }
  j.erase("netsmith_clipboard");
  Problems problems;
  const graph::ModelGraph part = graph::modelFromJson(j, problems);
  graph::ModelGraph g = model();
  std::map<std::string, std::string> rename;
  QStringList added;
  for (const auto& n : part.nodes) {
    const auto* def = m_document->registry().find(n.op);
    if (def && def->isSource) continue;  // one Input per model
    // Fresh ids, also against the ones given in this paste.
    std::string id = freshId(QString::fromStdString(n.op)).toStdString();
    std::string stem = id;
    while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back())))
      stem.pop_back();
    auto taken = [&](const std::string& candidate) {
      return g.find(candidate) != nullptr ||
             std::any_of(rename.begin(), rename.end(),
                         [&](const auto& r) { return r.second == candidate; });
    };
    for (int k = 1; taken(id); ++k)
      id = stem + std::to_string(k);
    rename[n.id] = id;
  }
  for (const auto& n : part.nodes) {
    if (!rename.count(n.id)) continue;
    graph::Node c = n;
    c.id = rename[n.id];
    c.x += offset.x();
    c.y += offset.y();
    std::vector<std::string> inputs;
    for (const auto& in : c.inputs)
      if (rename.count(in)) inputs.push_back(rename[in]);
    c.inputs = inputs;
    g.nodes.push_back(c);
    added << QString::fromStdString(c.id);
  }
  if (added.isEmpty()) {
    if (why) *why = tr("nothing to paste");
    return {};
  }
  commit(g, tr("Paste %n node(s)", nullptr, int(added.size())));
  return added;
}

QStringList ModelEditor::duplicate(const QStringList& ids) {
  return paste(copy(ids));
}

QStringList ModelEditor::blockKinds() {
  return {QStringLiteral("conv_bn_relu"), QStringLiteral("residual")};
}

QStringList ModelEditor::insertBlock(const QString& kind, const QString& after) {
  graph::ModelGraph g = model();
  const graph::Node* prev = after.isEmpty() ? nullptr : g.find(after.toStdString());
  const double x = prev ? prev->x : 0, y0 = prev ? prev->y + kRowGap : 0;
  std::vector<graph::Node> block;
  std::set<std::string> taken;
  auto make = [&](const std::string& op, Json params, std::vector<std::string> inputs) {
    graph::Node n;
    std::string id = freshId(QString::fromStdString(op)).toStdString();
    std::string stem = id;
    while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back())))
      stem.pop_back();
    for (int k = 1; taken.count(id) || g.find(id); ++k)
      id = stem + std::to_string(k);
    taken.insert(id);
    n.id = id;
    n.op = op;
    n.params = std::move(params);
    n.inputs = std::move(inputs);
    n.x = x;
    n.y = y0 + kRowGap * double(block.size());
    block.push_back(n);
    return id;
  };
  const std::vector<std::string> in =
      prev ? std::vector<std::string>{prev->id} : std::vector<std::string>{};
  const Json conv{{"out_channels", 32}, {"kernel_size", 3}, {"padding", 1}, {"bias", false}};
  std::string last;
  if (kind == QLatin1String("residual")) {
    // conv-bn-relu-conv-bn, plus the block's input, then ReLU. Channels stay the same.
    const auto c1 = make("Conv2d", conv, in);
    const auto b1 = make("BatchNorm2d", Json::object(), {c1});
    const auto r1 = make("ReLU", Json::object(), {b1});
    const auto c2 = make("Conv2d", conv, {r1});
    const auto b2 = make("BatchNorm2d", Json::object(), {c2});
    std::vector<std::string> addIn{b2};
    if (prev) addIn.push_back(prev->id);
    const auto add = make("Add", Json::object(), addIn);
    block.back().x = x - kColumnGap / 2;
    last = make("ReLU", Json::object(), {add});
    // The convolutions keep the block input's channel count when it is known.
    if (prev) {
      if (const auto* info = m_document->analysis().find(prev->id);
          info && info->outputShape.size() == 3)
        for (auto& n : block)
          if (n.op == "Conv2d") n.params["out_channels"] = info->outputShape[0];
    }
  } else {
    const auto c = make("Conv2d", conv, in);
    const auto b = make("BatchNorm2d", Json::object(), {c});
    last = make("ReLU", Json::object(), {b});
  }
  if (prev) {
    // The block takes over prev's consumers.
    for (auto& n : g.nodes)
      for (auto& i : n.inputs)
        if (i == prev->id) i = last;
    if (g.output == prev->id) g.output = last;
    shiftBelow(g, y0 - 1e-9, kRowGap * double(block.size()), prev->id);
  }
  QStringList ids;
  for (auto& n : block) {
    ids << QString::fromStdString(n.id);
    g.nodes.push_back(std::move(n));
  }
  commit(g, kind == QLatin1String("residual") ? tr("Insert residual block")
                                              : tr("Insert conv-BN-ReLU block"));
  return ids;
}

bool ModelEditor::needsLayout() const {
  const auto& nodes = model().nodes;
  return nodes.size() > 1 && std::all_of(nodes.begin(), nodes.end(), [](const graph::Node& n) {
           return n.x == 0.0 && n.y == 0.0;
         });
}

void ModelEditor::autoLayout() {
  graph::ModelGraph g = model();
  graph::layoutRows(g, kColumnGap, kRowGap);
  commit(g, tr("Auto layout"));
}

QString ModelEditor::fixFor(const QString& nodeId) const {
  for (const auto& p : m_document->problems()) {
    if (p.nodeId != nodeId.toStdString()) continue;
    static const QRegularExpression setIn(QStringLiteral("set in_features to (\\d+)"));
    static const QRegularExpression setOut(QStringLiteral("set \\w+\\.out_features to (\\d+)"));
    const QString fix = QString::fromStdString(p.fix);
    if (auto m = setIn.match(fix); m.hasMatch())
      return tr("Set in_features to %1").arg(m.captured(1));
    if (auto m = setOut.match(fix); m.hasMatch())
      return tr("Set out_features to %1 (the data's classes)").arg(m.captured(1));
    if (fix.contains(QStringLiteral("insert a Flatten"))) return tr("Insert a Flatten before it");
    if (const auto head = headFix(fix); head.outputs > 0) {
      return head.pooled
                 ? tr("Add global pooling, Flatten and a Linear of %1 outputs").arg(head.outputs)
                 : tr("Add a Linear of %1 outputs").arg(head.outputs);
    }
    if (const auto classes = missingOutFeatures(p); classes > 0)
      return tr("Set out_features to %1 (the data's classes)").arg(classes);
  }
  return {};
}

ModelEditor::HeadFix ModelEditor::headFix(const QString& fix) {
  // The task's head rule: "end the model with [Flatten and ]a Linear of N outputs".
  static const QRegularExpression endWith(
      QStringLiteral("end the model with (Flatten and )?a Linear of (\\d+) outputs"));
  const auto m = endWith.match(fix);
  if (!m.hasMatch()) return {};
  return {m.captured(2).toLongLong(), m.capturedLength(1) > 0};
}

std::int64_t ModelEditor::missingOutFeatures(const Problem& p) const {
  // A Linear without out_features: the number of classes is the usual answer (the head).
  const graph::Node* n = model().find(p.nodeId);
  if (!n || n->op != "Linear" || n->params.contains("out_features") ||
      p.message.find("out_features") == std::string::npos)
    return 0;
  return m_document->dataClasses();
}

QString ModelEditor::applyFix(const QString& nodeId) {
  for (const auto& p : m_document->problems()) {
    if (p.nodeId != nodeId.toStdString()) continue;
    static const QRegularExpression setIn(QStringLiteral("set in_features to (\\d+)"));
    static const QRegularExpression setOut(QStringLiteral("set \\w+\\.out_features to (\\d+)"));
    const QString fix = QString::fromStdString(p.fix);
    if (auto m = setIn.match(fix); m.hasMatch()) {
      setParam(nodeId, QStringLiteral("in_features"), Json(m.captured(1).toLongLong()));
      return tr("set %1.in_features to %2").arg(nodeId, m.captured(1));
    }
    if (auto m = setOut.match(fix); m.hasMatch()) {
      setParam(nodeId, QStringLiteral("out_features"), Json(m.captured(1).toLongLong()));
      return tr("set %1.out_features to %2").arg(nodeId, m.captured(1));
    }
    if (fix.contains(QStringLiteral("insert a Flatten"))) {
      const graph::Node* n = model().find(nodeId.toStdString());
      if (!n || n->inputs.empty()) return {};
      const QString id =
          insertOnEdge(QString::fromStdString(n->inputs[0]), nodeId, QStringLiteral("Flatten"));
      return id.isEmpty() ? QString() : tr("inserted %1 before %2").arg(id, nodeId);
    }
    if (const auto head = headFix(fix); head.outputs > 0) {
      // One undo step: the pooling (an image output) and the scoring Linear after the output.
      m_document->undoStack()->beginMacro(tr("Add a head to %1").arg(nodeId));
      QString last = nodeId;
      QStringList added;
      for (const char* op : {"GlobalAvgPool", "Flatten"}) {
        if (!head.pooled || last.isEmpty()) break;
        last = addNode(QString::fromLatin1(op), QPointF(), last);
        added << last;
      }
      const QString linear =
          last.isEmpty() ? QString() : addNode(QStringLiteral("Linear"), QPointF(), last);
      if (!linear.isEmpty()) {
        setParam(linear, QStringLiteral("out_features"), Json(head.outputs));
        added << linear;
      }
      m_document->undoStack()->endMacro();
      return linear.isEmpty()
                 ? QString()
                 : tr("added %1 after %2").arg(added.join(QStringLiteral(", ")), nodeId);
    }
    if (const auto classes = missingOutFeatures(p); classes > 0) {
      setParam(nodeId, QStringLiteral("out_features"), Json(classes));
      return tr("set %1.out_features to %2").arg(nodeId).arg(classes);
    }
  }
  return {};
}

}  // namespace netsmith::ui
