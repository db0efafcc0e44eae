#include "editor/graph_groups.h"

#include <QHash>
#include <QRegularExpression>

namespace netsmith::ui {

QString scopeOf(const QString& id) {
  static const QRegularExpression separator(QStringLiteral("[_.]"));
  const QStringList parts = id.split(separator);
  for (int i = 0; i + 1 < parts.size(); ++i)
    if (!parts[i].isEmpty() && parts[i].back().isDigit())
      return id.left(int(parts.mid(0, i + 1).join(QLatin1Char('_')).size()));
  return {};
}

std::vector<NodeGroup> scopeGroups(const graph::ModelGraph& model) {
  std::vector<NodeGroup> groups;
  QHash<QString, std::size_t> index;
  for (const auto& n : model.nodes) {
    const QString id = QString::fromStdString(n.id);
    const QString scope = scopeOf(id);
    if (scope.isEmpty()) continue;
    auto it = index.find(scope);
    if (it == index.end()) {
      it = index.insert(scope, groups.size());
      groups.push_back({scope, {}});
    }
    groups[*it].members << id;
  }
  std::vector<NodeGroup> out;
  for (auto& g : groups)
    if (g.members.size() >= 2) out.push_back(std::move(g));
  return out;
}

}  // namespace netsmith::ui
