/** `make bench`: every benchmark in turn; each prints its own numbers. */
import { runOracleBench } from './oracle';
import { runTransportBench } from './transport';

async function main(): Promise<void> {
  await runTransportBench();
  await runOracleBench();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
