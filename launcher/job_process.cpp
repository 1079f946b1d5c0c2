#include "job_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

extern char** environ;

namespace sb {

JobProcess::JobProcess(const batch::LaunchPlan& plan, const std::string& log_path, bool commands) {
  if (plan.argv.empty()) throw EnvironmentError("empty MPI launch command");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0)
    throw EnvironmentError(fmt::format("cannot create {}: {}", log_path, std::strerror(errno)));
  int null_in = -1;
  if (commands) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      const int err = errno;
      ::close(log);
      throw EnvironmentError(fmt::format("pipe: {}", std::strerror(err)));
    }
    null_in = fds[0];
    input_ = fds[1];
  } else {
    null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos && plan.env.count(kv.substr(0, eq)) != 0) continue;
    envs.push_back(kv);
  }
  for (const auto& [k, v] : plan.env) envs.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(log);
    if (null_in >= 0) ::close(null_in);
    close_input();
    throw EnvironmentError(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) ::signal(sig, SIG_DFL);
    ::execvpe(argv[0], argv.data(), envp.data());
    const std::string msg = fmt::format("cannot start {}: {}\n", argv[0], std::strerror(errno));
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with the child's own call
  ::close(log);
  if (null_in >= 0) ::close(null_in);
  pid_ = pid;
}

JobProcess::~JobProcess() {
  end(10.0);
  close_input();
}

bool JobProcess::send(const std::string& line) noexcept {
  if (input_ < 0) return false;
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(input_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;  // EPIPE (SIGPIPE is ignored): the job is gone
    done += static_cast<std::size_t>(w);
  }
  return true;
}

void JobProcess::close_input() noexcept {
  if (input_ >= 0) ::close(input_);
  input_ = -1;
}

bool JobProcess::running() {
  if (exited_) return false;
  const pid_t w = ::waitpid(pid_, &status_, WNOHANG);
  if (w == pid_) exited_ = true;
  return !exited_;
}

void JobProcess::terminate() {
  if (term_sent_ > 0) return;
  ::kill(-pid_, SIGTERM);
  term_sent_ = now();
}

double JobProcess::terminate_age() const {
  return term_sent_ > 0 ? now() - term_sent_ : 0.0;
}

void JobProcess::kill_all() noexcept {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
}

void JobProcess::end(double grace_s) noexcept {
  if (pid_ <= 0) return;
  if (running()) {
    terminate();
    while (running() && terminate_age() < grace_s)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_all();  // whatever is left of the group (ranks that ignored SIGTERM)
  if (!exited_ && ::waitpid(pid_, &status_, 0) == pid_) exited_ = true;
}

}  // namespace sb
