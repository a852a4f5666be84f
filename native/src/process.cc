// Process-group and parent-death settings for the workbench's children (Linux).
//   leadProcessGroup() -> boolean: makes this process the leader of a process group of its own, so the
//     host (and the child's reaper) can signal it and everything it started as one. Electron's
//     utilityProcess cannot start a child detached, so the child does it itself.
//   dieWithParent() -> boolean: the kernel sends this process SIGKILL when the thread that started it
//     exits, whatever this process's JavaScript thread is doing (a hung kernel blocks it).
//   limitWritableMemory(bytes) -> boolean: caps this process's writable memory (RLIMIT_DATA: the heap, and
//     the buffers V8 keeps outside it), so a reader of a hostile file fails an allocation instead of
//     taking the machine's memory. Where `ulimit -d` cannot wrap the start (Electron's utilityProcess).
#include <napi.h>
#include <sys/resource.h>
#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

Napi::Value LeadProcessGroup(const Napi::CallbackInfo& info) {
  if (getpgrp() != getpid()) setpgid(0, 0);  // a session leader (fork's detached) already leads its group
  return Napi::Boolean::New(info.Env(), getpgrp() == getpid());
}

Napi::Value DieWithParent(const Napi::CallbackInfo& info) {
#ifdef __linux__
  pid_t parent = getppid();
  bool ok = prctl(PR_SET_PDEATHSIG, SIGKILL) == 0;
  // The parent may have died before the call: then no signal would ever come.
  if (ok && getppid() != parent) kill(getpid(), SIGKILL);
  return Napi::Boolean::New(info.Env(), ok);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

Napi::Value LimitWritableMemory(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(info.Env(), "limitWritableMemory(bytes)").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  const double bytes = info[0].As<Napi::Number>().DoubleValue();
  if (!(bytes > 0)) return Napi::Boolean::New(info.Env(), false);
  rlimit limit{static_cast<rlim_t>(bytes), static_cast<rlim_t>(bytes)};
  return Napi::Boolean::New(info.Env(), setrlimit(RLIMIT_DATA, &limit) == 0);
}
