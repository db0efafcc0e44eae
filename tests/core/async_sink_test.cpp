// run::AsyncSink on its own, with a sink held shut at will: events reach the sink in order on its
// own thread; a display's full queue drops its oldest steps (never other events) without holding
// the publisher up and says how many it dropped; a records queue makes the publisher wait and loses
// nothing; flush() waits for the event being delivered; closing delivers what is queued; a sink
// that throws does not stop the deliveries after it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "run/events.h"
#include "train_fixtures.h"

using namespace netsmith::train;
using netsmith::testutil::Recorder;

namespace {

/// Holds every delivery inside onEvent() until opened; records what it got and on which thread.
class GatedSink : public run::EventSink {
 public:
  void onEvent(const run::TrainingEvent& e) override {
    std::unique_lock<std::mutex> lock(m_mutex);
    ++m_entered;
    m_cv.notify_all();
    m_cv.wait(lock, [&] { return m_open; });
    m_events.push_back(e);
    m_threads.push_back(std::this_thread::get_id());
  }
  /// Waits until a delivery is held inside onEvent().
  void waitUntilHolding() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_entered > 0; });
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_open = true;
    }
    m_cv.notify_all();
  }
  std::vector<run::TrainingEvent> events() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_events;
  }
  std::vector<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_threads;
  }

 private:
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  int m_entered = 0;
  bool m_open = false;
  std::vector<run::TrainingEvent> m_events;
  std::vector<std::thread::id> m_threads;
};

/// Opens the gate when the test leaves, so a failed assertion never leaves a delivery thread
/// held (the run::AsyncSink's destructor joins it).
struct GateOpener {
  GatedSink& gate;
  ~GateOpener() { gate.open(); }
};

run::TrainingEvent stepEventFor(std::int64_t step) {
  run::TrainingEvent e;
  e.type = run::EventType::BatchEnd;
  e.batch.step = step;
  e.batch.batch = step - 1;
  return e;
}

run::TrainingEvent logEventFor(const std::string& message,
                               run::EventType type = run::EventType::Log) {
  run::TrainingEvent e;
  e.type = type;
  e.message = message;
  return e;
}

/// "step 3" / "log: text" for each event, so that sequences compare in one EXPECT_EQ.
std::vector<std::string> describeSequence(const std::vector<run::TrainingEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    out.push_back(e.type == run::EventType::BatchEnd
                      ? "step " + std::to_string(e.batch.step)
                      : run::eventTypeName(e.type) + ": " + e.message);
  return out;
}

/// Waits up to `seconds` for `done`; true when it came.
bool waitForFlag(const std::atomic<bool>& done, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done;
}

}  // namespace

TEST(AsyncSink, DeliversEveryEventInOrderOnItsOwnThread) {
  auto gate = std::make_shared<GatedSink>();
  gate->open();
  std::vector<std::string> sent;
  {
    run::AsyncSink sink(gate);
    for (int i = 1; i <= 40; ++i) {
      sink.onEvent(stepEventFor(i));
      sent.push_back("step " + std::to_string(i));
      if (i % 10 == 0) {
        sink.onEvent(logEventFor("after " + std::to_string(i)));
        sent.push_back("log: after " + std::to_string(i));
      }
    }
    sink.flush();
    // flush() returned: everything sent is there, nothing skipped.
    EXPECT_EQ(describeSequence(gate->events()), sent);
    EXPECT_EQ(sink.droppedBatchEvents(), 0);
  }
  for (const auto& e : gate->events())
    EXPECT_EQ(e.batch.skippedBefore, 0);
  const auto threads = gate->threads();
  ASSERT_EQ(threads.size(), sent.size());
  EXPECT_NE(threads.front(), std::this_thread::get_id());
  for (const auto& id : threads)
    EXPECT_EQ(id, threads.front());  // one delivery thread
}

// A display queue with room for 3 steps behind a sink that does not answer: publishing 10 steps
// returns at once; the 7 oldest are dropped, never the log line between them; the first step
// delivered afterwards says 7 went before it.
TEST(AsyncSink, AFullDisplayQueueDropsTheOldestStepsAndCountsThem) {
  auto gate = std::make_shared<GatedSink>();
  run::AsyncSink sink(gate, run::Overflow::DropOldestBatch, 3);
  GateOpener opener{*gate};
  sink.onEvent(logEventFor("started", run::EventType::Started));
  gate->waitUntilHolding();  // the delivery thread is stuck in the sink from here on
  for (int i = 1; i <= 10; ++i) {
    sink.onEvent(stepEventFor(i));
    if (i == 2) sink.onEvent(logEventFor("kept"));
  }
  sink.onEvent(logEventFor("done", run::EventType::Finished));
  EXPECT_EQ(sink.droppedBatchEvents(), 7);
  EXPECT_TRUE(gate->events().empty());  // still held: publishing did not wait for the sink
  gate->open();
  sink.flush();
  const auto got = gate->events();
  EXPECT_EQ(describeSequence(got),
            (std::vector<std::string>{"started: started", "log: kept", "step 8", "step 9",
                                      "step 10", "finished: done"}));
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[2].batch.skippedBefore, 7);
  EXPECT_EQ(got[3].batch.skippedBefore, 0);
  EXPECT_EQ(got[4].batch.skippedBefore, 0);
  EXPECT_EQ(sink.droppedBatchEvents(), 7);
}

// A records queue with room for 2 steps: the third step waits in onEvent() until the sink takes
// one; a log line is queued meanwhile; nothing is dropped and the wait is measured.
TEST(AsyncSink, AFullRecordsQueueMakesThePublisherWaitAndLosesNothing) {
  auto gate = std::make_shared<GatedSink>();
  run::AsyncSink sink(gate, run::Overflow::Wait, 2);
  GateOpener opener{*gate};
  sink.onEvent(logEventFor("started", run::EventType::Started));
  gate->waitUntilHolding();
  sink.onEvent(stepEventFor(1));
  sink.onEvent(stepEventFor(2));  // the queue is full now
  std::atomic<bool> thirdSent{false};
  std::thread publisher([&] {
    sink.onEvent(stepEventFor(3));
    thirdSent = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(thirdSent);  // waiting for room
  // Events other than steps never wait.
  std::atomic<bool> logSent{false};
  std::thread logger([&] {
    sink.onEvent(logEventFor("meanwhile"));
    logSent = true;
  });
  EXPECT_TRUE(waitForFlag(logSent, 5.0));
  EXPECT_FALSE(thirdSent);
  gate->open();
  publisher.join();
  logger.join();
  EXPECT_TRUE(thirdSent);
  sink.flush();
  EXPECT_EQ(describeSequence(gate->events()),
            (std::vector<std::string>{"started: started", "step 1", "step 2", "log: meanwhile",
                                      "step 3"}));
  EXPECT_EQ(sink.droppedBatchEvents(), 0);
  EXPECT_GT(sink.waitedSeconds(), 0.05);
  EXPECT_LT(sink.waitedSeconds(), 30.0);
}

// flush() waits for the event the sink is still handling, not only for the queue to empty.
TEST(AsyncSink, FlushWaitsForTheEventBeingDelivered) {
  auto gate = std::make_shared<GatedSink>();
  run::AsyncSink sink(gate);
  GateOpener opener{*gate};
  sink.onEvent(stepEventFor(1));
  gate->waitUntilHolding();  // the queue is empty, the event is inside the sink
  std::atomic<bool> flushed{false};
  std::thread flusher([&] {
    sink.flush();
    flushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(flushed);
  gate->open();
  flusher.join();
  EXPECT_TRUE(flushed);
  EXPECT_EQ(gate->events().size(), 1u);
}

// Closing (the destructor) delivers everything still queued before it returns, and a sink that
// throws on some events still gets the ones after.
TEST(AsyncSink, ClosingDeliversWhatIsQueuedAndASinkThatThrowsGetsTheRest) {
  class ThrowingSink : public run::EventSink {
   public:
    void onEvent(const run::TrainingEvent& e) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      recorder.onEvent(e);
      if (e.type == run::EventType::Warning) throw std::runtime_error("a sink's own failure");
    }
    Recorder recorder;
  };
  auto target = std::make_shared<ThrowingSink>();
  std::vector<std::string> sent;
  {
    run::AsyncSink sink(target, run::Overflow::Wait, 4);
    for (int i = 1; i <= 30; ++i) {
      sink.onEvent(stepEventFor(i));
      sent.push_back("step " + std::to_string(i));
      if (i % 7 == 0) {
        sink.onEvent(logEventFor("bad " + std::to_string(i), run::EventType::Warning));
        sent.push_back("warning: bad " + std::to_string(i));
      }
    }
    // No flush: the destructor drains the queue.
  }
  EXPECT_EQ(describeSequence(target->recorder.events()), sent);
}
