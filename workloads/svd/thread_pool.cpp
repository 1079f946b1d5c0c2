#include "svd/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <memory>

namespace sb::svd {

ThreadPool::ThreadPool(int threads) {
  const int count = threads < 1 ? 1 : threads;
  threads_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) threads_.emplace_back([this, i] { loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::post(std::function<void(int)> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void ThreadPool::loop(int index) {
  for (;;) {
    std::function<void(int)> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      job(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::rethrow() {
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(e, error_);
  }
  if (e) std::rethrow_exception(e);
}

void ThreadPool::parallel_for(std::int64_t count,
                              const std::function<void(std::int64_t, int)>& body) {
  if (count <= 0) return;
  // Shared state outlives every runner: the caller waits until all runners have left.
  struct Shared {
    std::atomic<std::int64_t> next{0};
    std::int64_t runners_left = 0;
    std::exception_ptr error;
    std::mutex m;
    std::condition_variable cv;
  };
  auto shared = std::make_shared<Shared>();
  const std::int64_t runners = std::min<std::int64_t>(count, size());
  shared->runners_left = runners;
  for (std::int64_t r = 0; r < runners; ++r) {
    post([shared, &body, count](int thread) {
      for (std::int64_t i; (i = shared->next.fetch_add(1)) < count;) {
        try {
          body(i, thread);
        } catch (...) {
          std::lock_guard<std::mutex> lock(shared->m);
          if (!shared->error) shared->error = std::current_exception();
        }
      }
      std::lock_guard<std::mutex> lock(shared->m);
      if (--shared->runners_left == 0) shared->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(shared->m);
  shared->cv.wait(lock, [&] { return shared->runners_left == 0; });
  if (shared->error) std::rethrow_exception(shared->error);
}

}  // namespace sb::svd
