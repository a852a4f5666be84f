// The one list of every CUDA, NVRTC and NVML entry point this addon calls (ARCHITECTURE.md §2).
// X(required, name, symbol, return, params): `symbol` is the exact versioned ABI name resolved with
// dlsym; a missing required symbol makes the library "too old", a missing optional one is reported.
#pragma once
#include "cuda_types.h"

#define CUDA_DRIVER_SYMBOLS(X)                                                                          \
  X(true, cuInit, "cuInit", CUresult, (unsigned int))                                                   \
  X(true, cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int*))                                   \
  X(true, cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char**))                         \
  X(true, cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char**))                     \
  X(true, cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int*))                                       \
  X(true, cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice*, int))                                       \
  X(true, cuDeviceGetName, "cuDeviceGetName", CUresult, (char*, int, CUdevice))                         \
  X(true, cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int*, int, CUdevice))                \
  X(true, cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t*, CUdevice))                       \
  X(true, cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", CUresult, (char*, int, CUdevice))                 \
  X(true, cuDeviceGetUuid, "cuDeviceGetUuid_v2", CUresult, (CUuuid*, CUdevice))                         \
  X(true, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext*, CUdevice))       \
  X(true, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))              \
  X(true, cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                    \
  X(true, cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                           \
  X(true, cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                           \
    (CUmodule*, const void*, unsigned int, CUjit_option*, void**))                                      \
  X(true, cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                       \
  X(true, cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction*, CUmodule, const char*))   \
  X(true, cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int*, int, CUfunction))                  \
  X(true, cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                   \
  X(true, cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t*, size_t*))                                \
  X(true, cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr*, size_t))                                \
  X(true, cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                           \
  X(true, cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void*, size_t))                \
  X(true, cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void*, CUdeviceptr, size_t))                      \
  X(true, cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr, unsigned char, size_t))                  \
  X(true, cuLaunchKernel, "cuLaunchKernel", CUresult,                                                   \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, \
     void**))                                                                                           \
  X(true, cuEventCreate, "cuEventCreate", CUresult, (CUevent*, unsigned int))                           \
  X(true, cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                                \
  X(true, cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                                \
  X(true, cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                                     \
  X(false, cuEventElapsedTime_v2, "cuEventElapsedTime_v2", CUresult, (float*, CUevent, CUevent))        \
  X(false, cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",     \
    CUresult, (int*, CUfunction, int, size_t))                                                          \
  X(false, cuEventElapsedTime_v1, "cuEventElapsedTime", CUresult, (float*, CUevent, CUevent))

#define NVRTC_SYMBOLS(X)                                                                                \
  X(true, nvrtcVersion, "nvrtcVersion", nvrtcResult, (int*, int*))                                      \
  X(true, nvrtcGetErrorString, "nvrtcGetErrorString", const char*, (nvrtcResult))                       \
  X(true, nvrtcCreateProgram, "nvrtcCreateProgram", nvrtcResult,                                        \
    (nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*))             \
  X(true, nvrtcDestroyProgram, "nvrtcDestroyProgram", nvrtcResult, (nvrtcProgram*))                     \
  X(true, nvrtcCompileProgram, "nvrtcCompileProgram", nvrtcResult, (nvrtcProgram, int, const char* const*)) \
  X(true, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult, (nvrtcProgram, size_t*))       \
  X(true, nvrtcGetProgramLog, "nvrtcGetProgramLog", nvrtcResult, (nvrtcProgram, char*))                 \
  X(true, nvrtcGetPTXSize, "nvrtcGetPTXSize", nvrtcResult, (nvrtcProgram, size_t*))                     \
  X(true, nvrtcGetPTX, "nvrtcGetPTX", nvrtcResult, (nvrtcProgram, char*))                               \
  X(false, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult, (nvrtcProgram, size_t*))                \
  X(false, nvrtcGetCUBIN, "nvrtcGetCUBIN", nvrtcResult, (nvrtcProgram, char*))                          \
  X(false, nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", nvrtcResult, (int*))                 \
  X(false, nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", nvrtcResult, (int*))                       \
  X(false, nvrtcAddNameExpression, "nvrtcAddNameExpression", nvrtcResult, (nvrtcProgram, const char*))  \
  X(false, nvrtcGetLoweredName, "nvrtcGetLoweredName", nvrtcResult, (nvrtcProgram, const char*, const char**))

// The doctor's health queries (health.cc), kept apart from the sampling symbols above and below: every one is
// optional, since older drivers lack some and a missing one is reported per query, never as a missing library.
// Layouts and signatures are those of nvml.h (NVML API reference, "Device Queries").
struct NvmlPciInfoV3 {  // nvmlPciInfo_t, filled by nvmlDeviceGetPciInfo_v3
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];  // "00000000:3B:00.0": an eight-digit domain
};
#define NVML_HEALTH_SYMBOLS(X)                                                                           \
  X(false, nvmlDeviceGetName, "nvmlDeviceGetName", nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))    \
  X(false, nvmlDeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3", nvmlReturn_t, (nvmlDevice_t, NvmlPciInfoV3*)) \
  X(false, nvmlDeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode", nvmlReturn_t, (nvmlDevice_t, int*)) \
  X(false, nvmlDeviceGetDisplayActive, "nvmlDeviceGetDisplayActive", nvmlReturn_t, (nvmlDevice_t, int*))  \
  X(false, nvmlDeviceGetComputeMode, "nvmlDeviceGetComputeMode", nvmlReturn_t, (nvmlDevice_t, int*))      \
  X(false, nvmlDeviceGetMigMode, "nvmlDeviceGetMigMode", nvmlReturn_t, (nvmlDevice_t, unsigned int*, unsigned int*)) \
  X(false, nvmlDeviceGetEccMode, "nvmlDeviceGetEccMode", nvmlReturn_t, (nvmlDevice_t, int*, int*))        \
  X(false, nvmlDeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors", nvmlReturn_t,                     \
    (nvmlDevice_t, int, int, unsigned long long*))                                                      \
  X(false, nvmlDeviceGetRetiredPages, "nvmlDeviceGetRetiredPages", nvmlReturn_t,                         \
    (nvmlDevice_t, int, unsigned int*, unsigned long long*))                                            \
  X(false, nvmlDeviceGetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus", nvmlReturn_t, \
    (nvmlDevice_t, int*))                                                                               \
  X(false, nvmlDeviceGetRemappedRows, "nvmlDeviceGetRemappedRows", nvmlReturn_t,                         \
    (nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*))                         \
  X(false, nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons", nvmlReturn_t, \
    (nvmlDevice_t, unsigned long long*))                                                                \
  X(false, nvmlDeviceGetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons",       \
    nvmlReturn_t, (nvmlDevice_t, unsigned long long*))                                                  \
  X(false, nvmlSystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2", nvmlReturn_t, (int*))

#define NVML_SYMBOLS(X)                                                                                 \
  X(true, nvmlInit, "nvmlInit_v2", nvmlReturn_t, ())                                                    \
  X(true, nvmlErrorString, "nvmlErrorString", const char*, (nvmlReturn_t))                              \
  X(true, nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion", nvmlReturn_t, (char*, unsigned int)) \
  X(true, nvmlDeviceGetCount, "nvmlDeviceGetCount_v2", nvmlReturn_t, (unsigned int*))                   \
  X(true, nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", nvmlReturn_t, (unsigned int, nvmlDevice_t*)) \
  X(true, nvmlDeviceGetUUID, "nvmlDeviceGetUUID", nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))    \
  X(true, nvmlDeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo", nvmlReturn_t, (nvmlDevice_t, nvmlMemory_t*)) \
  X(false, nvmlDeviceGetMemoryInfo_v2, "nvmlDeviceGetMemoryInfo_v2", nvmlReturn_t, (nvmlDevice_t, nvmlMemory_v2_t*)) \
  X(false, nvmlDeviceGetName, "nvmlDeviceGetName", nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))   \
  X(false, nvmlDeviceGetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3", nvmlReturn_t, \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))                                                  \
  X(false, nvmlSystemGetProcessName, "nvmlSystemGetProcessName", nvmlReturn_t, (unsigned int, char*, unsigned int))
