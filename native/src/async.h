// A promise-returning AsyncWorker: `execute` runs on a libuv worker thread with no JS access (the
// "baton" pattern: inputs are plain C++ captured beforehand), `resolve` builds the JS result on the
// JS thread. A Failure set by `execute` rejects the promise with a structured error.
//
// Inline mode (setInline(true)) runs `execute` on the JS thread instead and settles the promise before
// returning. The runner and the compile worker use it: each is a process whose event loop has nothing
// else to do while a CUDA or NVRTC call runs, and a thread-pool round trip per call is pure overhead.
#pragma once
#include <napi.h>

#include <atomic>
#include <functional>
#include <vector>

#include "errors.h"

class PromiseWorker : public Napi::AsyncWorker {
 public:
  using ExecuteFn = std::function<void(Failure&)>;
  using ResolveFn = std::function<Napi::Value(Napi::Env)>;

  static std::atomic<bool>& inlineMode() {
    static std::atomic<bool> enabled{false};
    return enabled;
  }

  static Napi::Promise Start(Napi::Env env, ExecuteFn execute, ResolveFn resolve) {
    if (inlineMode()) return RunInline(env, execute, resolve);
    auto* worker = new PromiseWorker(env, std::move(execute), std::move(resolve));
    Napi::Promise promise = worker->deferred_.Promise();
    worker->Queue();
    return promise;
  }

  // Like Start, but keeps `keep` (a Buffer read by `execute`) alive until the worker is done.
  static Napi::Promise StartKeeping(Napi::Env env, Napi::Value keep, ExecuteFn execute, ResolveFn resolve) {
    if (inlineMode()) return RunInline(env, execute, resolve);  // `keep` is alive for the whole call
    auto* worker = new PromiseWorker(env, std::move(execute), std::move(resolve));
    worker->kept_.push_back(Napi::Persistent(keep));
    Napi::Promise promise = worker->deferred_.Promise();
    worker->Queue();
    return promise;
  }

 protected:
  static Napi::Promise RunInline(Napi::Env env, const ExecuteFn& execute, const ResolveFn& resolve) {
    auto deferred = Napi::Promise::Deferred::New(env);
    Failure failure;
    execute(failure);
    if (failure.failed) {
      deferred.Reject(toJsError(env, failure).Value());
    } else {
      try {
        deferred.Resolve(resolve(env));
      } catch (const Napi::Error& error) {
        deferred.Reject(error.Value());
      }
    }
    return deferred.Promise();
  }

  void Execute() override {
    execute_(failure_);
    if (failure_.failed) SetError(failure_.message);
  }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    try {
      deferred_.Resolve(resolve_(Env()));
    } catch (const Napi::Error& error) {
      deferred_.Reject(error.Value());
    }
  }
  void OnError(const Napi::Error&) override {
    Napi::HandleScope scope(Env());
    deferred_.Reject(toJsError(Env(), failure_).Value());
  }

 private:
  PromiseWorker(Napi::Env env, ExecuteFn execute, ResolveFn resolve)
      : Napi::AsyncWorker(env, "gpu-workbench"),
        deferred_(Napi::Promise::Deferred::New(env)),
        execute_(std::move(execute)),
        resolve_(std::move(resolve)) {}

  Napi::Promise::Deferred deferred_;
  ExecuteFn execute_;
  ResolveFn resolve_;
  Failure failure_;
  std::vector<Napi::Reference<Napi::Value>> kept_;
};
