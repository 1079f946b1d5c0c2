// The scheduler's answer to a REQUEST (task_dispatch.hpp).
#include "task_dispatch.hpp"

#include <vector>

#include "case_record.hpp"

namespace sb::detail {

void answer_request(MPI_Comm world, int source, int crank, Reader& rd, SchedulerCase& sc,
                    TaskEvents& events, int timed, std::int64_t& next) {
  const int want = rd.get<std::int32_t>();
  const int count = rd.get<std::int32_t>();
  for (int i = 0; i < count; ++i) {
    const TaskOutcome o = get_outcome(rd);
    sc.on_task(o);
    if (timed >= 0) events.add(timed, crank, o);
  }
  if (want <= 0) return;
  std::vector<std::int64_t> ids;
  const std::int64_t ntasks = sc.num_tasks();
  while (static_cast<int>(ids.size()) < want && next < ntasks) ids.push_back(next++);
  Writer w;
  w.put_vec(ids);
  send(world, source, kTagAssign, w);
}

}  // namespace sb::detail
