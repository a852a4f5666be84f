// NVML for the whole addon: loaded by the loader, initialised once per process (nvmlInit_v2), never shut
// down (a sampling thread may still be in a call while the process exits). The monitor and the doctor's
// health queries both start here.
#pragma once
#include "errors.h"

// True when NVML is loaded and initialised; otherwise fills `failure` with why not.
bool ensureNvml(Failure& failure);
