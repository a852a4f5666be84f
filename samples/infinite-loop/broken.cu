// Never finishes: a spin-wait on a flag nothing ever sets. Only the watchdog ends it.
__global__ void spinForever(volatile int* flag) {
  while (flag[0] == 0) {
  }
}
