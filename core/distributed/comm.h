#pragma once

// A data-parallel process group on torch.distributed's c10d: the TCPStore rendezvous and the
// collectives the trainer needs (Gloo on CPU, NCCL on CUDA where LibTorch has it). Every call
// waits at most the configured timeout and turns c10d's failures into netsmith::Error with a
// message that says what was being done and what to check.
//
//   Comm comm(env, "auto", torch::kCPU, 60);   // serves or joins the store
//   comm.connect();                             // every rank arrives here
//   comm.broadcast(tensors, "the initial weights");
//   comm.allreduceSum(stats, "the batch statistics");
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/dist_env.h"

namespace netsmith::distributed {

class Comm {
 public:
  /// Opens the rendezvous store: rank 0 serves it (on a free port when env.pickFreePort; see
  /// storePort()), the others connect to MASTER_ADDR:MASTER_PORT.
  Comm(DistEnv env, const std::string& backend, const torch::Device& device, double timeoutSeconds);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int storePort() const;
  /// Joins the process group (waits for every rank, at most the timeout).
  void connect();

  int rank() const { return m_env.rank; }
  int size() const { return m_env.worldSize; }
  const DistEnv& env() const { return m_env; }
  std::string backendName() const { return m_backendName; }
  double timeoutSeconds() const { return m_timeout; }
  /// Called on a failure before the error is thrown; its text is added to the message (the
  /// launcher names the child that died).
  void setFailureHint(std::function<std::string()> hint) { m_hint = std::move(hint); }

  /// In-place sum over all ranks, waited for.
  void allreduceSum(std::vector<torch::Tensor>& tensors, const std::string& what);
  /// Overwrites `tensors` with rank 0's, waited for.
  void broadcast(std::vector<torch::Tensor>& tensors, const std::string& what);

  /// An in-flight sum; wait() before reading the tensor.
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    bool active() const;

   private:
    friend class Comm;
    struct Impl;
    std::unique_ptr<Impl> m_impl;
  };
  Pending allreduceSumAsync(torch::Tensor tensor, const std::string& what);
  void wait(Pending& pending);

  /// Wraps a c10d failure into netsmith::Error (rethrows anything else unchanged).
  [[noreturn]] void fail(const std::string& what, const std::string& detail) const;

  struct Backend;

 private:
  DistEnv m_env;
  torch::Device m_device;
  double m_timeout;
  std::string m_backendName;
  std::function<std::string()> m_hint;
  struct StoreHolder;
  std::unique_ptr<StoreHolder> m_store;
  std::unique_ptr<Backend> m_backend;
};

/// The differentiable cross-rank sum used by synchronised BatchNorm: forward sums the tensor
/// over ranks, backward sums the gradient over ranks.
torch::Tensor allreduceSumAutograd(Comm& comm, const torch::Tensor& x);

}  // namespace netsmith::distributed
