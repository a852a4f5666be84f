// Device printf and assert text. The driver writes it to this process's stdout (printf) and stderr
// (assert) when the host synchronises. The runner points fds 1 and 2 at an anonymous file for the span
// of a run and reads after each step what that step produced. Synchronous: these are quick syscalls.
#include <napi.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "args.h"

namespace {
struct Capture {
  int file = -1;
  int savedOut = -1;
  int savedErr = -1;
  off_t read = 0;
};
Capture capture;

int anonymousFile() {
#ifdef MFD_CLOEXEC
  int memfd = memfd_create("gpu-workbench-device-output", MFD_CLOEXEC);
  if (memfd >= 0) return memfd;
#endif
  std::FILE* tmp = std::tmpfile();
  if (!tmp) return -1;
  int fd = dup(fileno(tmp));
  std::fclose(tmp);
  return fd;
}

void flushStdio() {
  std::fflush(stdout);
  std::fflush(stderr);
}
}  // namespace

// captureOutputStart() -> boolean: whether capture is on (false where no anonymous file can be made).
Napi::Value CaptureOutputStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (capture.file >= 0) return Napi::Boolean::New(env, true);
  flushStdio();
  int file = anonymousFile();
  if (file < 0) return Napi::Boolean::New(env, false);
  capture.savedOut = dup(1);
  capture.savedErr = dup(2);
  if (capture.savedOut < 0 || capture.savedErr < 0 || dup2(file, 1) < 0 || dup2(file, 2) < 0) {
    if (capture.savedOut >= 0) {
      dup2(capture.savedOut, 1);
      close(capture.savedOut);
    }
    if (capture.savedErr >= 0) {
      dup2(capture.savedErr, 2);
      close(capture.savedErr);
    }
    close(file);
    capture = Capture{};
    return Napi::Boolean::New(env, false);
  }
  capture.file = file;
  capture.read = 0;
  return Napi::Boolean::New(env, true);
}

// captureOutputTake(maxBytes) -> { text, droppedBytes }: what was written since the last take, at most
// maxBytes of it (the rest is counted, not kept).
Napi::Value CaptureOutputTake(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t maxBytes = static_cast<size_t>(args::number(env, info[0], "maxBytes", 0, 64 * 1024 * 1024));
  Napi::Object out = Napi::Object::New(env);
  std::string text;
  double dropped = 0;
  if (capture.file >= 0) {
    flushStdio();
    off_t end = lseek(capture.file, 0, SEEK_END);
    if (end > capture.read) {
      size_t pending = static_cast<size_t>(end - capture.read);
      text.resize(std::min(pending, maxBytes));
      // pread: fds 1 and 2 share this file's offset, which later writes must keep at the end.
      ssize_t got = pread(capture.file, text.data(), text.size(), capture.read);
      text.resize(got > 0 ? static_cast<size_t>(got) : 0);
      dropped = static_cast<double>(pending - text.size());
      capture.read = end;
    }
    if (capture.read > (1 << 20) && ftruncate(capture.file, 0) == 0) {
      lseek(capture.file, 0, SEEK_SET);
      capture.read = 0;
    }
  }
  out.Set("text", Napi::String::New(env, text));
  out.Set("droppedBytes", Napi::Number::New(env, dropped));
  return out;
}

// captureOutputStop(): fds 1 and 2 back where they were.
Napi::Value CaptureOutputStop(const Napi::CallbackInfo& info) {
  if (capture.file >= 0) {
    flushStdio();
    dup2(capture.savedOut, 1);
    dup2(capture.savedErr, 2);
    close(capture.savedOut);
    close(capture.savedErr);
    close(capture.file);
    capture = Capture{};
  }
  return info.Env().Undefined();
}
