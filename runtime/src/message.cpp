#include "message.hpp"

#include <chrono>
#include <thread>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

namespace sb::detail {

void Reader::need(std::size_t n) const {
  if (pos_ + n > buf_.size()) throw Error("internal: short scheduler/worker message");
}

void put_outcome(Writer& w, const TaskOutcome& o) {
  w.put<std::int64_t>(o.task).put<double>(o.start).put<double>(o.end);
  w.put<std::int64_t>(o.bytes).put<std::int32_t>(static_cast<std::int32_t>(o.phase));
  w.put_vec(o.partial);
}

TaskOutcome get_outcome(Reader& r) {
  TaskOutcome o;
  o.task = r.get<std::int64_t>();
  o.start = r.get<double>();
  o.end = r.get<double>();
  o.bytes = r.get<std::int64_t>();
  o.phase = static_cast<Phase>(r.get<std::int32_t>());
  o.partial = r.get_vec<double>();
  return o;
}

namespace {
MessageTransport* g_transport = nullptr;
}  // namespace

void set_message_transport(MessageTransport* transport) noexcept {
  g_transport = transport;
}

void send(MPI_Comm comm, int dest, int tag, const std::vector<char>& data) {
  if (g_transport != nullptr) return g_transport->send(dest, tag, data);
  SB_MPI_CHECK(MPI_Send(data.data(), static_cast<int>(data.size()), MPI_BYTE, dest, tag, comm));
}

void send_empty(MPI_Comm comm, int dest, int tag) {
  if (g_transport != nullptr) return g_transport->send(dest, tag, {});
  SB_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, dest, tag, comm));
}

bool try_receive(MPI_Comm comm, int source, int tag, Message& out) {
  if (g_transport != nullptr) return g_transport->try_receive(source, tag, out);
  int flag = 0;
  MPI_Status st;
  SB_MPI_CHECK(MPI_Iprobe(source, tag, comm, &flag, &st));
  if (flag == 0) return false;
  int count = 0;
  SB_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
  out.source = st.MPI_SOURCE;
  out.tag = st.MPI_TAG;
  out.data.resize(static_cast<std::size_t>(count));
  SB_MPI_CHECK(MPI_Recv(out.data.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm,
                        MPI_STATUS_IGNORE));
  return true;
}

bool receive(MPI_Comm comm, int source, int tag, Message& out, double deadline, int max_sleep_us) {
  Backoff backoff(max_sleep_us);
  while (!try_receive(comm, source, tag, out)) {
    if (deadline > 0 && now() > deadline) return false;
    backoff.pause();
  }
  return true;
}

void Backoff::pause() {
  // A few busy probes first (latency of a reply already on its way), then sleeps that double
  // up to max_us_.
  if (max_us_ <= 0) {
    std::this_thread::yield();
    return;
  }
  if (us_ < 0) us_ = 0;
  if (us_ == 0) {
    us_ = 1;
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(us_));
  us_ = us_ * 2 > max_us_ ? max_us_ : us_ * 2;
}

}  // namespace sb::detail
