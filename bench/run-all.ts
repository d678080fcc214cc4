/** `make bench`: every benchmark in turn; each prints its own numbers. */
import { runEngineVsR } from './engine-vs-r';
import { runOracleBench } from './oracle';
import { runTransportBench } from './transport';

async function main(): Promise<void> {
  await runTransportBench();
  await runOracleBench();
  console.log('\nEngine vs R');
  if (runEngineVsR() !== 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
