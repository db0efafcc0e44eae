// Precompiled header for the core targets: LibTorch and the other heavy third-party headers.
#pragma once
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
