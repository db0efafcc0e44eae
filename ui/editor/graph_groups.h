#pragma once

// Groups of nodes the canvas can collapse into one block: the scopes an exporter names its
// layers by (torch.onnx: "layer1_0_conv1" and "layer1_1" are in "layer1", "features_2_conv_0_0"
// is in "features_2"). A stage of a ResNet or MobileNet reads as one block with its totals.
#include <QString>
#include <QStringList>
#include <vector>

#include "graph/model_graph.h"

namespace netsmith::ui {

struct NodeGroup {
  QString name;
  QStringList members;  ///< in the model's order
};

/// The scope of a node id: its leading segments (split at '_' or '.') up to the first that
/// ends in a digit, when more segments follow; "" when the id has no scope ("conv1", "relu_1").
QString scopeOf(const QString& id);

/// The model's groups of two or more nodes sharing a scope, in the order of their first node.
std::vector<NodeGroup> scopeGroups(const graph::ModelGraph& model);

}  // namespace netsmith::ui
