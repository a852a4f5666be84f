import { callsStillBlocked } from '../doctor/time-limit';
import { main } from './cli';

void main(process.argv).then((code) => {
  process.exitCode = code;
  // A driver or NVML call that ran over its limit (a wedged GPU) still holds a worker thread, which would keep
  // this process alive after its answer was printed: end it now (stdout and stderr are written synchronously).
  if (callsStillBlocked() > 0) process.exit(code);
});
