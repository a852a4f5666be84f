// Prints every runtime-API and driver-API error code with its name and message, as JSON lines, so the
// workbench's catalog of messages is generated from what the libraries really say.
//   nvcc -o error_strings error_strings.cu -lcuda && ./error_strings > error-strings.jsonl
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

static void json_string(const char* s) {
  std::putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') std::putchar('\\');
    std::putchar(*s);
  }
  std::putchar('"');
}

int main() {
  for (int code = 0; code <= 1000; code++) {
    const char* name = cudaGetErrorName(static_cast<cudaError_t>(code));
    if (name && std::strstr(name, "Unrecognized") == nullptr && std::strstr(name, "unrecognized") == nullptr) {
      std::printf("{\"api\":\"runtime\",\"code\":%d,\"name\":", code);
      json_string(name);
      std::printf(",\"message\":");
      json_string(cudaGetErrorString(static_cast<cudaError_t>(code)));
      std::printf("}\n");
    }
    const char* dname = nullptr;
    const char* dmessage = nullptr;
    if (cuGetErrorName(static_cast<CUresult>(code), &dname) == CUDA_SUCCESS && cuGetErrorString(static_cast<CUresult>(code), &dmessage) == CUDA_SUCCESS) {
      std::printf("{\"api\":\"driver\",\"code\":%d,\"name\":", code);
      json_string(dname);
      std::printf(",\"message\":");
      json_string(dmessage);
      std::printf("}\n");
    }
  }
  return 0;
}
