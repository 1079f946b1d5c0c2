#pragma once
/// @file plugin_trial.hpp
/// A plugin is loaded in a forked child process first (plugin_loader.cpp): a library whose
/// constructors or registration crash, abort or call exit() ends the child, not scalebench,
/// and is named in one line ("plugin libx.so crashed while loading: SIGSEGV (Segmentation
/// fault)"), exit code 2. Only what loaded cleanly there is then loaded for real.

#include <functional>
#include <string>

namespace sb::detail {

/// Runs `load` (the whole load of a plugin, as the caller does it for real) in a forked child
/// and returns when it succeeded there. Throws sb::UsageError naming `shown` when it threw
/// (its own message), crashed (the signal and the last line the child printed), ended the
/// process (its exit status) or did not finish within `limit_s` seconds. Call it while the
/// process has one thread.
void try_plugin_in_child(const std::string& shown, const std::function<void()>& load,
                         double limit_s = 120);

}  // namespace sb::detail
