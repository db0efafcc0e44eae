#include "monitor/sweep_text.h"

#include <cmath>

namespace netsmith::ui {

bool objectiveInPercent(const std::string& objective) {
  return objective.size() >= 8 && objective.compare(objective.size() - 8, 8, "accuracy") == 0;
}

QString objectiveText(double value, const std::string& objective) {
  if (std::isnan(value)) return QStringLiteral("-");
  return objectiveInPercent(objective) ? QString::number(100 * value, 'f', 2) + QLatin1Char('%')
                                       : QString::number(value, 'f', 4);
}

QString sweepValueText(const Json& value) {
  if (value.is_number_float()) return QString::number(value.get<double>(), 'g', 4);
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

}  // namespace netsmith::ui
