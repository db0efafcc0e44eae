#pragma once
// The studio's task views (evaluation/task_view.h), by pointer, for headers that only pass them.
#include <memory>

namespace netsmith::ui {

class TaskViewRegistry;
using TaskViewsPtr = std::shared_ptr<const TaskViewRegistry>;

}  // namespace netsmith::ui
