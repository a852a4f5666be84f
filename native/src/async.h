// A promise-returning AsyncWorker: `execute` runs on a libuv worker thread with no JS access (the
// "baton" pattern: inputs are plain C++ captured beforehand), `resolve` builds the JS result on the
// JS thread. A Failure set by `execute` rejects the promise with a structured error.
#pragma once
#include <napi.h>

#include <functional>
#include <vector>

#include "errors.h"

class PromiseWorker : public Napi::AsyncWorker {
 public:
  using ExecuteFn = std::function<void(Failure&)>;
  using ResolveFn = std::function<Napi::Value(Napi::Env)>;

  static Napi::Promise Start(Napi::Env env, ExecuteFn execute, ResolveFn resolve) {
    auto* worker = new PromiseWorker(env, std::move(execute), std::move(resolve));
    Napi::Promise promise = worker->deferred_.Promise();
    worker->Queue();
    return promise;
  }

  // Like Start, but keeps `keep` (a Buffer read by `execute`) alive until the worker is done.
  static Napi::Promise StartKeeping(Napi::Env env, Napi::Value keep, ExecuteFn execute, ResolveFn resolve) {
    auto* worker = new PromiseWorker(env, std::move(execute), std::move(resolve));
    worker->kept_.push_back(Napi::Persistent(keep));
    Napi::Promise promise = worker->deferred_.Promise();
    worker->Queue();
    return promise;
  }

 protected:
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
