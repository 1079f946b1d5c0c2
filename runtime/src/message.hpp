#pragma once
/// @file message.hpp
/// Scheduler <-> worker messages over MPI: tags, a byte-buffer writer/reader, and a receive that
/// waits without burning a core (MPI_Iprobe with exponential back-off sleeps), so an idle
/// scheduler or worker does not steal cycles from compute threads on small nodes.

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "scalebench/workload.hpp"

namespace sb::detail {

enum Tag : int {
  kTagCaseBegin = 11,    ///< s->w: json {spec, rank, size, threads, series_points, concurrent,
                         ///< comm ("case" or "node")}
  kTagReady = 12,        ///< w->s: empty
  kTagRepeatBegin = 13,  ///< s->w: int32 repeat
  kTagRequest = 14,      ///< w->s: int32 want, outcomes
  kTagAssign = 15,       ///< s->w: int64 task ids (empty: no more tasks this repeat)
  kTagDone = 16,         ///< w->s: RepeatDone (repeat_timing.hpp): phases, partial, wall, trace
  kTagValidate = 17,     ///< s->w: empty
  kTagValidation = 18,   ///< w->s: doubles
  kTagCaseEnd = 19,      ///< s->w: empty
  kTagError = 20,        ///< w->s: string
  kTagShutdown = 21,     ///< s->w: empty
  kTagStartup = 22,      ///< w->s: json describing the worker (start-up)
  kTagTelemetry = 23,    ///< w->s: json, the case's telemetry (after its validation, untimed)
  kTagPark = 24,         ///< s->w: empty; an A/B side's turn is over, sleep between probes
  kTagResume = 25,       ///< s->w: empty; its next turn begins: answer READY (ab_turns.hpp)
};

/// Appends plain values and vectors to a byte buffer.
class Writer {
 public:
  template <class T>
  Writer& put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&v, sizeof(T));
    return *this;
  }
  template <class T>
  Writer& put_vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<std::int64_t>(static_cast<std::int64_t>(v.size()));
    append(v.data(), v.size() * sizeof(T));
    return *this;
  }
  Writer& put_str(const std::string& s) {
    put<std::int64_t>(static_cast<std::int64_t>(s.size()));
    append(s.data(), s.size());
    return *this;
  }
  [[nodiscard]] const std::vector<char>& bytes() const { return buf_; }

 private:
  void append(const void* p, std::size_t n) {
    if (n == 0) return;
    const std::size_t old = buf_.size();
    buf_.resize(old + n);
    std::memcpy(buf_.data() + old, p, n);
  }
  std::vector<char> buf_;
};

/// Reads what Writer wrote; throws sb::Error on a short buffer.
class Reader {
 public:
  explicit Reader(const std::vector<char>& b) : buf_(b) {}
  template <class T>
  T get() {
    T v;
    need(sizeof(T));
    std::memcpy(&v, buf_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> get_vec() {
    const auto n = static_cast<std::size_t>(get<std::int64_t>());
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), buf_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  std::string get_str() {
    const auto n = static_cast<std::size_t>(get<std::int64_t>());
    need(n);
    std::string s(buf_.data() + pos_, n);
    pos_ += n;
    return s;
  }

 private:
  void need(std::size_t n) const;
  const std::vector<char>& buf_;
  std::size_t pos_ = 0;
};

/// A finished task in a REQUEST (worker -> scheduler).
void put_outcome(Writer& w, const TaskOutcome& o);
[[nodiscard]] TaskOutcome get_outcome(Reader& r);

/// A received message.
struct Message {
  int source = -1;
  int tag = -1;
  std::vector<char> data;
};

void send(MPI_Comm comm, int dest, int tag, const std::vector<char>& data);
inline void send(MPI_Comm comm, int dest, int tag, const Writer& w) {
  send(comm, dest, tag, w.bytes());
}
void send_empty(MPI_Comm comm, int dest, int tag);

/// Receives the next message matching (source, tag) (MPI_ANY_SOURCE / MPI_ANY_TAG allowed) if
/// one is waiting; never blocks.
bool try_receive(MPI_Comm comm, int source, int tag, Message& out);

/// A stand-in for MPI's point-to-point messages: while one is set (set_message_transport),
/// send, send_empty and try_receive go through it, whatever the communicator. The scheduler's
/// benchmark drives the real scheduler with thousands of simulated workers this way
/// (bench/bench_scheduler.cpp); nothing else sets one.
class MessageTransport {
 public:
  virtual ~MessageTransport() = default;
  virtual void send(int dest, int tag, const std::vector<char>& data) = 0;
  virtual bool try_receive(int source, int tag, Message& out) = 0;
};
/// Sets the transport (nullptr: MPI again). Not thread-safe: set it before the ranks' code runs.
void set_message_transport(MessageTransport* transport) noexcept;

/// Waits for a message matching (source, tag), sleeping with back-off between probes (at most
/// `max_sleep_us` microseconds at a time). `deadline` (seconds on sb::now(), 0 = none) makes it
/// return false when passed.
bool receive(MPI_Comm comm, int source, int tag, Message& out, double deadline = 0,
             int max_sleep_us = 2000);

/// Longest sleep between probes while a GPU case runs: none, the ranks spin (yielding the core).
/// The host is idle then and repeats last milliseconds, and a sleep may overrun by the kernel's
/// timer slack (50 us by default): see the task events of subset-mean seed on single-gpu.
constexpr int kGpuPollUs = 0;

/// Longest sleep between probes while a CPU case runs: short, so that a message waits little
/// (it is part of the repeat's time, `messages` in the case record), yet a waiting rank leaves
/// the cores to the computing workers (a probe costs about a microsecond).
constexpr int kCpuPollUs = 50;

/// Back-off sleeper for polling loops: short at first, up to `max_us` microseconds; with
/// `max_us` <= 0 it never sleeps but yields the core at every pause.
class Backoff {
 public:
  explicit Backoff(int max_us = 500) : max_us_(max_us) {}
  void reset() { us_ = 0; }
  void pause();

 private:
  int us_ = 0;
  int max_us_;
};

}  // namespace sb::detail
