// Compiled with USE_C10D_GLOO (and USE_C10D_NCCL where LibTorch has CUDA): c10d's backend
// headers are empty without them. See core/CMakeLists.txt.
#include "distributed/comm.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(NETSMITH_HAS_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <c10/util/Logging.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "common/error.h"
#include "distributed/bind_address.h"

namespace netsmith::distributed {

namespace {

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

/// LibTorch's own log lines (c10d's store warns "The server socket has failed to bind to
/// [::]:29555 (errno: 99 ...)" when MASTER_ADDR is an IPv4 address, after glog's "Logging
/// before InitGoogleLogging()") reach the user raw; Netsmith says what failed in its own
/// errors. Errors alone are let through, to stderr, and no log file is written.
void quietLibraryLogs() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(C10_USE_GLOG)
    FLAGS_logtostderr = true;
    FLAGS_minloglevel = google::GLOG_ERROR;
    if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging("netsmith");
#elif defined(C10_USE_GFLAGS)
    FLAGS_caffe2_log_level = 2;  // errors only: c10's own logger (gflags puts it at the top)
#else
    c10::FLAGS_caffe2_log_level = 2;  // errors only: c10's own logger
#endif
  });
}

bool isLoopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

}  // namespace

struct Comm::StoreHolder {
  c10::intrusive_ptr<c10d::Store> store;
};

// The process group, whatever its class (ProcessGroupGloo derives from ProcessGroup in
// LibTorch 1.x and from Backend in 2.x; both have these calls).
struct Comm::Backend {
  virtual ~Backend() = default;
  virtual c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& t) = 0;
  virtual c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& t) = 0;
};

namespace {

template <class PG>
struct BackendOf : Comm::Backend {
  explicit BackendOf(c10::intrusive_ptr<PG> g) : pg(std::move(g)) {}
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& t) override {
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    return pg->allreduce(t, o);
  }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& t) override {
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    return pg->broadcast(t, o);
  }
  c10::intrusive_ptr<PG> pg;
};

}  // namespace

namespace {

/// Runs a c10d call; its failures become Comm::fail's netsmith::Error about `what`.
template <class F>
void guarded(const Comm& comm, const std::string& what, F&& call) {
  try {
    call();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    comm.fail(what, e.what_without_backtrace());
  } catch (const std::exception& e) {
    comm.fail(what, e.what());
  }
}

}  // namespace

struct Comm::Pending::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
};

Comm::Pending::Pending() = default;
Comm::Pending::~Pending() = default;
Comm::Pending::Pending(Pending&&) noexcept = default;
Comm::Pending& Comm::Pending::operator=(Pending&&) noexcept = default;
bool Comm::Pending::active() const {
  return m_impl && m_impl->work;
}

Comm::Comm(DistEnv env, const std::string& backend, const torch::Device& device,
           double timeoutSeconds)
    : m_env(std::move(env)), m_device(device), m_timeout(timeoutSeconds) {
  m_backendName = backend;
  if (m_backendName == "auto") m_backendName = device.is_cuda() ? "nccl" : "gloo";
  if (m_backendName == "nccl") {
#if !defined(NETSMITH_HAS_NCCL)
    throw Error(
        "train.dist_backend is \"nccl\", but this build's LibTorch has no CUDA/NCCL; "
        "use \"gloo\" (or \"auto\")");
#else
    if (!device.is_cuda())
      throw Error("train.dist_backend \"nccl\" needs a CUDA device (train.device is \"" +
                  device.str() + "\"); use \"gloo\" on CPU");
#endif
  } else if (m_backendName != "gloo") {
    throw Error("train.dist_backend: unknown backend \"" + backend + "\" (auto, gloo, nccl)");
  }
  quietLibraryLogs();
  m_store = std::make_unique<StoreHolder>();
  if (!m_env.storeFile.empty()) {
    // A local job: the rendezvous is a file in a private folder, so nothing listens.
    try {
      m_store->store = c10::make_intrusive<c10d::FileStore>(m_env.storeFile, m_env.worldSize);
      m_store->store->setTimeout(millis(m_timeout));
    } catch (const std::exception& e) {
      throw Error(std::string("distributed training: rank ") + std::to_string(m_env.rank) +
                  " cannot open the rendezvous file " + m_env.storeFile + " (" + e.what() + ")");
    }
    return;
  }
  c10d::TCPStoreOptions o;
  const bool serve = m_env.rank == 0 && !m_env.storeHostedByLauncher;
  o.isServer = serve;
  o.port = static_cast<std::uint16_t>(serve && m_env.pickFreePort ? 0 : m_env.masterPort);
  o.numWorkers = m_env.worldSize;
  o.waitWorkers = false;
  o.timeout = millis(m_timeout);
  try {
    // Served on MASTER_ADDR's interface only (LibTorch would listen on every interface).
    std::optional<ScopedBindAddress> onMasterAddr;
    if (serve) onMasterAddr.emplace(m_env.masterAddr);
    auto tcp = c10::make_intrusive<c10d::TCPStore>(m_env.masterAddr, o);
    if (serve && m_env.pickFreePort) m_env.masterPort = tcp->getPort();
    m_store->store = tcp;
  } catch (const std::exception& e) {
    throw Error(std::string("distributed training: rank ") + std::to_string(m_env.rank) +
                (serve ? " cannot serve the rendezvous store on port "
                       : " cannot reach the rendezvous store at ") +
                (serve ? std::to_string(o.port) : m_env.masterAddr + ":" + std::to_string(o.port)) +
                " (" + e.what() + "); check MASTER_ADDR and MASTER_PORT");
  }
}

Comm::~Comm() = default;

int Comm::storePort() const {
  return m_env.masterPort;
}

void Comm::connect() {
  c10::intrusive_ptr<c10d::Store> store = m_store->store;
  guarded(*this, "joining the process group", [&] {
    if (m_backendName == "gloo") {
      auto o = c10d::ProcessGroupGloo::Options::create(millis(m_timeout));
      if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface)
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(iface));
      else if (isLoopback(m_env.masterAddr))
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else if (m_env.rank == 0)  // MASTER_ADDR is this host's: listen on that interface
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(m_env.masterAddr));
      else
        o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      o->threads = 2;
      m_backend = std::make_unique<BackendOf<c10d::ProcessGroupGloo>>(
          c10::make_intrusive<c10d::ProcessGroupGloo>(store, m_env.rank, m_env.worldSize, o));
    }
#if defined(NETSMITH_HAS_NCCL)
    else {
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = millis(m_timeout);
      m_backend = std::make_unique<BackendOf<c10d::ProcessGroupNCCL>>(
          c10::make_intrusive<c10d::ProcessGroupNCCL>(store, m_env.rank, m_env.worldSize, o));
    }
#endif
  });
  // One round trip proves every rank is there (Gloo connects lazily on some versions).
  std::vector<torch::Tensor> hello{torch::ones({1}, torch::TensorOptions().device(m_device))};
  allreduceSum(hello, "the first exchange");
  if (hello[0].item<double>() != double(m_env.worldSize))
    fail("the first exchange", "the ranks disagree on the world size");
}

void Comm::fail(const std::string& what, const std::string& detail) const {
  std::string d = detail;
  while (!d.empty() && (d.back() == '\n' || d.back() == ' '))
    d.pop_back();
  std::string hint = m_hint ? m_hint() : "";
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%g", m_timeout);
  throw Error("distributed training (rank " + std::to_string(m_env.rank) + " of " +
              std::to_string(m_env.worldSize) + ", " + m_backendName + "): " + what + " failed (" +
              d + "): another process ended or stopped answering" +
              (hint.empty() ? "" : " (" + hint + ")") + "; each exchange waits at most " + timeout +
              " s (train.dist_timeout)");
}

void Comm::allreduceSum(std::vector<torch::Tensor>& tensors, const std::string& what) {
  if (m_env.worldSize == 1) return;
  for (auto& t : tensors) {
    auto p = allreduceSumAsync(t, what);
    wait(p);
  }
}

void Comm::broadcast(std::vector<torch::Tensor>& tensors, const std::string& what) {
  if (m_env.worldSize == 1) return;
  for (auto& t : tensors) {
    guarded(*this, "broadcasting " + what, [&] {
      // Gloo wants contiguous dense tensors; copy back when the original is not.
      auto c = t.contiguous();
      std::vector<at::Tensor> one{c};
      auto work = m_backend->broadcast(one);
      if (!work->wait(millis(m_timeout))) fail("broadcasting " + what, "timed out");
      if (!c.is_same(t)) t.copy_(c);
    });
  }
}

Comm::Pending Comm::allreduceSumAsync(torch::Tensor tensor, const std::string& what) {
  Pending p;
  if (m_env.worldSize == 1) return p;
  p.m_impl = std::make_unique<Pending::Impl>();
  p.m_impl->what = what;
  guarded(*this, "summing " + what, [&] {
    std::vector<at::Tensor> one{std::move(tensor)};
    p.m_impl->work = m_backend->allreduce(one);
  });
  return p;
}

void Comm::wait(Pending& pending) {
  if (!pending.active()) return;
  const std::string what = pending.m_impl->what;
  auto work = std::move(pending.m_impl->work);
  pending.m_impl.reset();
  guarded(*this, "summing " + what, [&] {
    if (!work->wait(millis(m_timeout))) fail("summing " + what, "timed out");
  });
}

namespace {

struct AllReduceSumFn : torch::autograd::Function<AllReduceSumFn> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                               std::int64_t comm) {
    ctx->saved_data["comm"] = comm;
    std::vector<torch::Tensor> t{x.detach().clone().contiguous()};
    reinterpret_cast<Comm*>(comm)->allreduceSum(t, "synchronised BatchNorm statistics");
    return t[0];
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* comm = reinterpret_cast<Comm*>(ctx->saved_data["comm"].toInt());
    std::vector<torch::Tensor> t{grads[0].contiguous().clone()};
    comm->allreduceSum(t, "synchronised BatchNorm gradients");
    return {t[0], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor allreduceSumAutograd(Comm& comm, const torch::Tensor& x) {
  return AllReduceSumFn::apply(x,
                               static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(&comm)));
}

}  // namespace netsmith::distributed
