#pragma once
/// @file scale_command.hpp
/// `scalebench scale --nodes LIST [--mode strong|weak] [--dir DIR] [--step K] -- RUN OPTIONS`:
/// a scaling study inside one allocation (docs/batch.md, "Scaling studies"). For every node
/// count K of LIST (or K alone with --step, a chain of jobs' one step) it runs
/// `scalebench run RUN OPTIONS --nodes K --scaling MODE [--scale-factor K/K0] --out
/// DIR/nodes-K.h5`, each a job step on the allocation's first K nodes (K0: the smallest count;
/// weak mode grows every case's problem K/K0 times by its workload's rule), then merges DIR
/// into DIR/scaling.h5 and prints the scaling table. Signals (INT, TERM, HUP, USR1) go to the
/// run in progress, and no later count starts.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sb {

void add_scale_command(CLI::App& app, int& exit_code, const std::vector<std::string>& argv);

}  // namespace sb
