// Plugins for the loader's tests (tests/plugin/CMakeLists.txt builds this file once per
// FIXTURE_* definition): a good one, and one for each way a plugin can be wrong.
#include <memory>
#include <string>
#include <vector>

#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"

namespace {

/// A complete description; nothing here is run (the loader only describes and checks it).
sb::Workload describe(const std::string& name) {
  sb::Workload w;
  w.name = name;
  w.description = "loader test fixture";
  w.keys = {{"n", "size"}};
  w.preset = [](const std::string&) {
    sb::Params p;
    p.set("n", "8");
    return p;
  };
  w.expand = [](const sb::Params& p) { return std::vector<sb::Params>{p}; };
  w.make_scheduler = [](const sb::CaseSpec&) -> std::unique_ptr<sb::SchedulerCase> {
    return nullptr;
  };
  w.make_worker = [](const sb::CaseSpec&, const sb::CaseEnv&) -> std::unique_ptr<sb::WorkerCase> {
    return nullptr;
  };
  w.cross_check = [](const sb::Fingerprint&, const sb::Fingerprint&) {
    return std::vector<sb::Check>{};
  };
  return w;
}

}  // namespace

#if FIXTURE_GOOD
sb::Workload first() {
  return describe("fixture-a");
}
sb::Workload second() {
  return describe("fixture-b");
}
SB_REGISTER_WORKLOAD(first);
SB_REGISTER_WORKLOAD(second);
#elif FIXTURE_CLASH  // a built-in workload's name
sb::Workload clash() {
  return describe("svd");
}
SB_REGISTER_WORKLOAD(clash);
#elif FIXTURE_TWICE  // one name registered twice
sb::Workload one() {
  return describe("fixture-twice");
}
SB_REGISTER_WORKLOAD(one);
SB_REGISTER_WORKLOAD(one);
#elif FIXTURE_BAD_NAME
sb::Workload bad_name() {
  return describe("no spaces/slashes");
}
SB_REGISTER_WORKLOAD(bad_name);
#elif FIXTURE_INCOMPLETE        // a required member left empty
sb::Workload incomplete() {
  sb::Workload w = describe("fixture-incomplete");
  w.make_worker = nullptr;
  return w;
}
SB_REGISTER_WORKLOAD(incomplete);
#elif FIXTURE_THROWS            // describing the workload fails
sb::Workload throws() {
  throw sb::UsageError("fixture: cannot describe myself");
}
SB_REGISTER_WORKLOAD(throws);
#elif FIXTURE_UNDEFINED_SYMBOL  // needs a function scalebench does not have (another API)
namespace sb {
int function_of_another_api(int);  // declared, defined nowhere
}
sb::Workload undefined() {
  sb::Workload w = describe("fixture-undefined");
  w.description += std::to_string(sb::function_of_another_api(1));
  return w;
}
SB_REGISTER_WORKLOAD(undefined);
#elif FIXTURE_EMPTY             // includes the registration header, registers nothing
#elif FIXTURE_CRASH_SEGV || FIXTURE_CRASH_ABORT || FIXTURE_CRASH_EXIT  // its constructor ends it
#include <cstdint>
#include <cstdio>
#include <cstdlib>
namespace {
volatile std::uintptr_t nowhere = 0;  // read at run time: the compiler cannot see the null
struct AtLoad {
  AtLoad() {
#if FIXTURE_CRASH_SEGV
    *reinterpret_cast<volatile int*>(nowhere) = 1;  // a segmentation fault while it loads
#elif FIXTURE_CRASH_ABORT
    std::fputs("fixture: giving up while loading\n", stderr);
    std::abort();
#else
    std::exit(0);  // a plugin that ends the program, with success
#endif
  }
} at_load;
}  // namespace
sb::Workload never() {
  return describe("fixture-crash");
}
SB_REGISTER_WORKLOAD(never);
#else
#error "define one FIXTURE_*"
#endif
