#pragma once
/// @file thread_pool.hpp
/// A fixed pool of CPU threads for the svd CPU worker: block QRs run on it asynchronously
/// (WorkerCase::submit/poll), and the tree levels and U formation run on it as parallel loops.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sb::svd {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] int size() const { return static_cast<int>(threads_.size()); }
  /// Runs job(thread_index) on some pool thread; exceptions are kept for rethrow().
  void post(std::function<void(int)> job);
  /// Runs body(i, thread_index) for i in [0, count) on the pool and waits; rethrows the first
  /// exception a body threw.
  void parallel_for(std::int64_t count, const std::function<void(std::int64_t, int)>& body);
  /// Rethrows the first exception a posted job threw (then forgets it).
  void rethrow();

 private:
  void loop(int index);

  std::vector<std::thread> threads_;
  std::deque<std::function<void(int)>> queue_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace sb::svd
