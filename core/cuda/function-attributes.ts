/**
 * CUfunction_attribute values the host passes to cuFuncSetAttribute, by name, from the CUDA driver API
 * (cuda.h, enum CUfunction_attribute). The native addon names the same values in native/src/cuda_types.h.
 */

/** The most dynamic shared memory a launch of the function may ask for; above 48 KiB it must be raised first. */
export const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
