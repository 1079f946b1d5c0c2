#include "comms/pair_schedule.hpp"

namespace sb::comms {

std::vector<Step> pair_steps(int n, Schedule schedule) {
  std::vector<Step> out;
  if (n < 2) return out;
  if (schedule == Schedule::serial) {
    // Distance d = 1, 2, ...: consecutive steps use different workers where they can.
    for (int d = 1; d < n; ++d)
      for (int src = 0; src < n; ++src) out.push_back({{src, (src + d) % n}});
    return out;
  }
  // Circle method over an even count (a bye for odd n): worker m stays, the others rotate.
  const int m = n % 2 == 0 ? n : n + 1;
  for (int round = 0; round < m - 1; ++round) {
    Step there, back;
    for (int k = 0; k < m / 2; ++k) {
      const int a = k == 0 ? m - 1 : (round + k) % (m - 1);
      const int b = (round + m - 1 - k) % (m - 1);
      if (a >= n || b >= n) continue;  // the bye
      there.push_back({a, b});
      back.push_back({b, a});
    }
    out.push_back(std::move(there));
    out.push_back(std::move(back));
  }
  return out;
}

const Transfer* transfer_of(const Step& step, int me) {
  for (const Transfer& t : step)
    if (t.src == me || t.dst == me) return &t;
  return nullptr;
}

}  // namespace sb::comms
