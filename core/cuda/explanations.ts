import type { CatalogEntry } from './error-catalog';

/**
 * The CUDA errors developers actually meet, in plain words: what happened, the likely causes, and what
 * to do next. Keyed by the driver API code (the runtime API uses the same number for these, except
 * where `runtimeOnly` says so).
 */
export interface Explanation {
  summary: string;
  causes: string[];
  next: string[];
}

export const EXPLANATIONS: Record<number, Explanation> = {
  1: {
    summary:
      'A call was given a value outside what it accepts. For a kernel launch this is the driver rejecting the configuration itself, without saying which limit.',
    causes: [
      'More than 1024 threads per block, a block or grid dimension over its limit, or a dimension of 0',
      'More than 48 KiB of dynamic shared memory without raising cudaFuncAttributeMaxDynamicSharedMemorySize, or more than the device can give at all',
      'More threads per block than the kernel was compiled for with __launch_bounds__',
      'A null or freed pointer, or a size of 0, passed to a memory call',
    ],
    next: [
      'Run the launch through `gpu-workbench validate`: it names the limit, the value and the fix.',
      'Check each argument of the failing call against its documented range.',
    ],
  },
  2: {
    summary: 'The GPU ran out of memory for this allocation.',
    causes: [
      'The data really is larger than the free device memory',
      'Another process holds much of the GPU (see the per-process memory)',
      'Memory leaked by earlier allocations that were never freed',
      'A caching allocator (PyTorch, CuPy) holding freed blocks it has not returned, or fragmentation',
    ],
    next: [
      'Compare the request with free and total memory (`gpu-workbench devices` shows who holds what).',
      'Free what you no longer need, process the data in smaller pieces, or use a GPU with more memory.',
    ],
  },
  3: {
    summary: 'CUDA could not initialise: the driver is not usable from this process.',
    causes: [
      'The NVIDIA kernel module and the user-space driver library differ in version (after an update without a reboot)',
      'No permission on /dev/nvidia*',
      'CUDA was used in a process forked after CUDA was initialised',
    ],
    next: ['Run `nvidia-smi`: if it fails too, fix the driver installation or reboot.', 'Initialise CUDA after fork(), or use the spawn start method.'],
  },
  100: {
    summary: 'No CUDA-capable device is visible to this process.',
    causes: [
      'CUDA_VISIBLE_DEVICES is empty or names devices that do not exist',
      'The container was started without GPU access',
      'The machine has no NVIDIA GPU, or its driver is not loaded',
    ],
    next: ['Check `nvidia-smi` and CUDA_VISIBLE_DEVICES; in a container, pass the GPU in (--gpus all).'],
  },
  101: {
    summary: 'The device number asked for does not exist.',
    causes: ['A device index at or past the device count (CUDA_VISIBLE_DEVICES renumbers devices from 0)'],
    next: ['List the devices (`gpu-workbench devices`) and use one of their ordinals.'],
  },
  46: {
    summary: 'Every CUDA device is busy or unavailable.',
    causes: [
      'The GPU is in exclusive-process compute mode and another process holds it',
      'The device is being reset, or has fallen off the bus (check dmesg for Xid errors)',
    ],
    next: ['Check `nvidia-smi` for the compute mode and the processes on the GPU.'],
  },
  200: {
    summary: 'The module image is not a valid CUDA binary.',
    causes: ['A file that is not a cubin, fatbin or PTX was loaded', 'A truncated or corrupted binary'],
    next: ['Recompile the kernel, and load exactly what the compiler produced.'],
  },
  209: {
    summary: 'The binary has no code this GPU can run: it was built for other architectures, and has no PTX the driver could compile.',
    causes: [
      'Built with -arch=sm_XX for a different GPU generation (for example sm_80 code on an sm_90 device, with no PTX embedded)',
      'A library shipped without support for this GPU',
    ],
    next: ['Compile for this device (`-arch=sm_90` for an H100/H200), or embed PTX (`-gencode=arch=compute_XX,code=compute_XX`).'],
  },
  218: {
    summary: 'The driver could not compile the PTX in this module.',
    causes: ['PTX that uses instructions this GPU lacks (for example sm_90a-only instructions on another GPU)', 'Hand-written or corrupted PTX'],
    next: ['Compile for the right target and read the JIT log the workbench shows with the error.'],
  },
  222: {
    summary: 'The PTX was produced by a newer CUDA toolkit than this driver supports, so the driver cannot compile it.',
    causes: ['NVRTC or nvcc newer than the installed driver (for example a CUDA 13 compiler with a CUDA 12 driver)'],
    next: [
      'Update the NVIDIA driver, or compile with a toolkit no newer than the driver (`gpu-workbench doctor` compares them), or ship a cubin for the exact GPU instead of PTX.',
    ],
  },
  400: {
    summary: 'A handle (stream, event, module, function, context) is invalid.',
    causes: ['Using an object after destroying it', 'Mixing handles from different contexts or devices'],
    next: ['Check the lifetime of the object the call names.'],
  },
  500: {
    summary: 'A named symbol was not found: usually a kernel name that does not exist in the module.',
    causes: [
      'A C++ kernel looked up by its plain name: C++ names are mangled; declare it extern "C" or look up the mangled name',
      'A typo, or a template kernel that was never instantiated',
    ],
    next: ['List the kernels in the compiled module (`gpu-workbench compile` shows each one with its mangled name).'],
  },
  700: {
    summary:
      'A kernel read or wrote memory at an address that is not valid. This error is sticky: the CUDA context is dead, and every later CUDA call in the process fails the same way; only a new process recovers.',
    causes: [
      'An index past the end of a buffer (a missing `if (i < n)` bounds check, or an off-by-one)',
      'A pointer that was never set, is null, or points to host memory',
      'A buffer used after it was freed',
      'An index computed in 32-bit int that overflowed',
    ],
    next: [
      'Run it under compute-sanitizer (memcheck) to get the faulting line, the thread and the address.',
      'Check every index against its buffer size; a grid that overshoots n needs a bounds check.',
    ],
  },
  701: {
    summary:
      'The launch needs more resources than one block can have: "too many resources requested for launch". Usually registers: threads per block × registers per thread is more than the 65536 a block may use.',
    causes: [
      'A kernel with many registers per thread launched with too many threads per block (for example 255 registers at 1024 threads)',
      'Compiling with -G (debug), which uses many more registers',
    ],
    next: [
      'Use fewer threads per block (`gpu-workbench validate` tells the most this kernel allows), or cap registers with __launch_bounds__ or -maxrregcount.',
    ],
  },
  702: {
    summary: 'The kernel ran too long and the watchdog stopped it. Sticky: the context is dead.',
    causes: ['A loop that never ends, or a GPU that also drives a display and has a run-time limit'],
    next: ['Find the loop that does not terminate; split long work into several launches.'],
  },
  710: {
    summary: 'A device-side assert() in the kernel failed. Sticky: the context is dead.',
    causes: ['The condition of an assert in device code was false; the assert message in the program output says which and where'],
    next: ['Read the assertion message (file, line, block and thread) printed to stderr; fix the condition it checks.'],
  },
  714: {
    summary: 'A thread overflowed its call stack on the GPU. Sticky.',
    causes: ['Deep or unbounded recursion in device code', 'Very large local arrays'],
    next: ['Reduce recursion depth, or raise the stack size with cudaDeviceSetLimit(cudaLimitStackSize, ...).'],
  },
  715: {
    summary: 'The GPU executed an illegal instruction. Sticky: the context is dead.',
    causes: ['A __trap() or asm("trap;") in the kernel', 'Calling through a corrupted function pointer', 'Code built for another architecture'],
    next: ['Look for __trap() and virtual calls in the kernel; run compute-sanitizer.'],
  },
  716: {
    summary: 'A load or store used an address not aligned to its size (for example a float4 read from an address that is not a multiple of 16). Sticky.',
    causes: [
      'Casting a pointer to a wider type (float* to float4*) at an offset that breaks alignment',
      'A struct packed in a way the device cannot read in one access',
    ],
    next: ['Align the data to the access size, or read it in narrower pieces; compute-sanitizer names the line.'],
  },
  717: {
    summary: 'An instruction was used on memory of the wrong address space (for example a shared-memory operation on a global address). Sticky.',
    causes: ['A stray pointer that landed in the shared or local window', 'Generic pointers cast to the wrong space'],
    next: ['Treat it as an invalid address: run compute-sanitizer to find the access.'],
  },
  718: {
    summary: 'The program counter went somewhere invalid. Sticky.',
    causes: ['Stack corruption, or a corrupted function pointer'],
    next: ['Run compute-sanitizer; check local arrays written out of bounds.'],
  },
  719: {
    summary: 'The kernel failed while running: "unspecified launch failure". Sticky: the context is dead.',
    causes: ['Usually an invalid memory access the driver could not classify more precisely', 'A kernel that exceeded the watchdog on some systems'],
    next: ['Run under compute-sanitizer to find the access; treat it like an illegal address (700).'],
  },
  720: {
    summary: 'A cooperative launch asked for more blocks than can be resident on the device at once.',
    causes: ['gridDim larger than (blocks per SM at this block size) × (number of SMs)'],
    next: ['Size the grid with cudaOccupancyMaxActiveBlocksPerMultiprocessor × SM count, and loop inside the kernel.'],
  },
  801: {
    summary: 'The operation is not supported on this device or configuration.',
    causes: ['A feature this GPU or driver lacks (cooperative launch, clusters, managed memory on some platforms)'],
    next: ['Check the device attribute for the feature (`gpu-workbench devices --attributes`).'],
  },
  999: {
    summary: 'An unknown error: the driver could not classify it. Treat the context as unusable.',
    causes: ['A driver or hardware fault; check dmesg for Xid messages'],
    next: ['Restart the process; if it repeats, check `nvidia-smi -q` and the system log.'],
  },
};

/** Runtime-API codes with no driver-API code of the same number, explained alike. */
export const RUNTIME_ONLY_EXPLANATIONS: Record<number, Explanation> = {
  9: {
    summary: 'The launch configuration is invalid (the runtime API checks it before the driver sees it).',
    causes: ['More than 1024 threads per block, a block or grid dimension over its limit, or a dimension of 0'],
    next: ['Run the launch through `gpu-workbench validate`: it names the limit and the fix.'],
  },
  35: {
    summary: 'The installed NVIDIA driver is older than the CUDA runtime this program was built with.',
    causes: ['A program or library built with a newer CUDA toolkit than the driver supports'],
    next: ['Update the NVIDIA driver, or use a build of the program made with an older toolkit (`gpu-workbench doctor` shows both versions).'],
  },
  98: {
    summary: 'The kernel has no code for this device: "invalid device function".',
    causes: ['The program was compiled for other GPU architectures and without PTX for this one'],
    next: ['Recompile with -arch for this device (sm_90 for an H100/H200), or embed PTX.'],
  },
};

/** The plain-words explanation of a catalog entry, where the catalog has one. */
export const explanationFor = (entry: CatalogEntry | null | undefined): Explanation | null =>
  entry ? (EXPLANATIONS[entry.code] ?? (entry.name.startsWith('cuda') ? RUNTIME_ONLY_EXPLANATIONS[entry.code] : undefined) ?? null) : null;
