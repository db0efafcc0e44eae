#pragma once

// How the Experiments page writes a sweep's numbers: an objective's value as the rest of the
// studio writes it, and a swept setting's value.
#include <QString>
#include <string>

#include "common/json.h"

namespace netsmith::ui {

/// Whether `objective` reads as a percentage (an accuracy), as on the dashboard and the
/// Evaluation page.
bool objectiveInPercent(const std::string& objective);
/// An objective's value: "68.80%" for an accuracy, "0.4123" for a loss, "-" for none (NaN).
QString objectiveText(double value, const std::string& objective);
/// A swept setting's value: a float in 4 significant digits, a string as it is, else its JSON.
QString sweepValueText(const Json& value);

}  // namespace netsmith::ui
