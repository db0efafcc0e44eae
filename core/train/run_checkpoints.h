#pragma once

// A run's checkpoints: what one holds (weights, optimizer state, the loop's position and the
// callbacks' state, the plan, classes and normalisation) and how a resume reads it back.
#include <string>

#include "train/callback.h"
#include "train/loop_state.h"
#include "train/run_setup.h"

namespace netsmith::train {

class RunCheckpoints {
 public:
  /// `directory`: the run's checkpoints folder ("" writes nothing).
  RunCheckpoints(RunContext& ctx, RunSetup& setup, LoopState& state, CallbackList& callbacks,
                 std::string directory)
      : m_ctx(ctx),
        m_setup(setup),
        m_state(state),
        m_callbacks(callbacks),
        m_dir(std::move(directory)) {}

  /// Writes checkpoints/<tag>.safetensors atomically and announces it; returns its path ("" when
  /// the run writes no checkpoints).
  std::string write(const std::string& tag, const Json& metrics);
  /// Continues the checkpoint at `path` exactly: weights, optimizer, position, callbacks.
  /// Throws netsmith::Error naming the file when it belongs to another model or run.
  void resume(const std::string& path);

  const std::string& directory() const { return m_dir; }
  const std::string& last() const { return m_last; }
  const std::string& best() const { return m_best; }

 private:
  RunContext& m_ctx;
  RunSetup& m_setup;
  LoopState& m_state;
  CallbackList& m_callbacks;
  std::string m_dir;
  std::string m_last, m_best;
};

}  // namespace netsmith::train
