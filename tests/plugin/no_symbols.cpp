// A shared library that is not a scalebench plugin: it loads, but has neither symbol.
extern "C" __attribute__((visibility("default"))) int not_a_workload() {
  return 1;
}
