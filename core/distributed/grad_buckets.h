#pragma once

// Gradient averaging for data parallelism: the trainable parameters are grouped, last layer
// first, into flat buckets of about `bucketMb`. During the backward pass of an optimizer step
// each parameter's hook copies its finished gradient into its bucket, and a bucket's
// all-reduce starts as soon as the bucket is full, while backward goes on with earlier layers.
// Buckets start in index order on every rank (a bucket waits for the ones before it), so the
// ranks issue their collectives in the same order.
//
//   GradBuckets buckets(comm, params, 25.0);
//   buckets.arm();        // before the backward pass that ends an accumulation group
//   loss.backward();
//   buckets.finish();     // the rest starts, everything is waited for, .grad holds the sum
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "distributed/comm.h"

namespace netsmith::distributed {

class GradBuckets {
 public:
  GradBuckets(Comm& comm, std::vector<torch::Tensor> params, double bucketMb);
  ~GradBuckets();
  GradBuckets(const GradBuckets&) = delete;
  GradBuckets& operator=(const GradBuckets&) = delete;

  void arm();
  void finish();
  std::size_t bucketCount() const { return m_buckets.size(); }
  /// Buckets whose all-reduce started inside the backward pass at the last finish().
  std::size_t startedEarly() const { return m_startedEarly; }

 private:
  struct Bucket {
    torch::Tensor flat;
    std::vector<std::size_t> members;  // indices into m_params
    std::vector<std::int64_t> offsets;
    std::size_t filled = 0;
    bool launched = false;
    Comm::Pending pending;
  };
  void onGrad(std::size_t param, const torch::Tensor& grad);
  void launchReady();

  Comm& m_comm;
  std::vector<torch::Tensor> m_params;
  std::vector<unsigned> m_hooks;
  std::vector<Bucket> m_buckets;
  std::vector<std::pair<std::size_t, std::size_t>> m_where;  // param -> (bucket, member)
  std::vector<bool> m_filled;
  std::size_t m_nextLaunch = 0;
  std::size_t m_startedEarly = 0;
  bool m_armed = false;
  bool m_inFinish = false;
};

}  // namespace netsmith::distributed
