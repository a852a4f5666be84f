// Waits for the flag a bounded number of times, then gives up and records that it timed out.
__global__ void spinForever(volatile int* flag) {
  for (int tries = 0; tries < 100000 && flag[0] == 0; tries++) {
  }
  if (flag[0] == 0 && threadIdx.x == 0) flag[1] = 1;
}
