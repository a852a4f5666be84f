// The runner's CUDA state: one primary context, and the modules and functions loaded into it, named
// by small integer ids so that JS never holds a raw handle. Every operation takes the mutex and makes
// the context current on its worker thread first.
#pragma once
#include <map>
#include <mutex>

#include "errors.h"

struct Session {
  std::mutex mutex;
  bool open = false;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int nextId = 1;
  std::map<int, CUmodule> modules;
  std::map<int, std::pair<int, CUfunction>> functions;  // id -> (module id, handle)
  // The run's time origin (markTimeOrigin): launches report their GPU start and end after it. Valid only
  // once recorded in the current run; a failed record leaves it invalid, so no launch measures from a
  // stale one.
  CUevent timeOrigin = nullptr;
  bool timeOriginValid = false;
};

Session& session();
bool requireDriver(Failure& failure, const char* api);
// Call with session().mutex held. Fails with a workbench error when no context is open.
bool enterContext(Failure& failure, const char* api);
