import { main } from './cli';

void main(process.argv).then((code) => {
  process.exitCode = code;
});
