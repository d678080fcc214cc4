/** The test-only EchoService (test/proto): its descriptor image and deprecation notices. */
import { join } from 'node:path';
import { packageRoot } from '../../src/rpc/descriptors';
import type { DeprecationNotice } from '../../src/rpc/deprecations';

export const ECHO_DESCRIPTORS = join(packageRoot(), 'test', 'gen', 'testing.binpb');

/** Notices for what the test proto deprecates (a method and a field). */
export const ECHO_DEPRECATIONS: Readonly<Record<string, DeprecationNotice>> = {
  'forecast.testing.v1.EchoService.OldEcho': { since: '2026-03-01T00:00:00Z', link: 'https://example.com/docs/deprecations#old-echo' },
  'forecast.testing.v1.ShoutRequest.legacy_note': { since: '2026-06-15T00:00:00Z', link: 'https://example.com/docs/deprecations#legacy-note' },
};

import { EchoServiceService } from '../gen/forecast/testing/v1/echo_service.pb';
import { bindService } from '../../src/rpc/registry';
import type { ServiceImpl } from '../../src/rpc/method';
import type { Clock } from '../../src/clock';
import type { Logger } from '../../src/log';
import { startTestService, type TestService } from './service';

/** A test service that also serves the test-only EchoService with `impl`. */
export function startWithEcho(impl: ServiceImpl<typeof EchoServiceService>, options: { clock?: Clock; log?: Logger } = {}): Promise<TestService> {
  return startTestService({
    ...options,
    extraDescriptors: [ECHO_DESCRIPTORS],
    deprecations: ECHO_DEPRECATIONS,
    extraServices: () => [bindService(EchoServiceService, impl)],
  });
}
