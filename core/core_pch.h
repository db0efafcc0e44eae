// Precompiled header for the core targets: LibTorch and the other heavy third-party headers.
#pragma once
#include <torch/torch.h>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
