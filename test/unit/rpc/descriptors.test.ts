/** The contract's secrets: every response field marked `debug_redact`, which idempotent replays never carry. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadDescriptors, redactedResponseFields } from '../../../src/rpc/descriptors';

test('the secrets a response shows once are marked debug_redact in the contract, and only they', () => {
  const { registry } = loadDescriptors();
  assert.deepEqual(Object.fromEntries([...redactedResponseFields(registry)].sort()), {
    '/forecast.v1.AccountService/SignUp': ['apiKey'],
    '/forecast.v1.KeyService/CreateKey': ['apiKey'],
    '/forecast.v1.KeyService/RotateKey': ['apiKey'],
    '/forecast.v1.SubscriptionService/CreateSubscription': ['secret'],
    '/forecast.v1.SubscriptionService/RotateSubscriptionSecret': ['secret'],
  });
  // every string field of a response named like a secret is marked (a new one cannot be forgotten)
  for (const file of registry.files) {
    for (const service of file.services) {
      for (const method of service.methods) {
        for (const field of method.output.fields) {
          if (/^(api_key|secret|.*_secret)$/.test(field.name)) assert.equal(field.proto.options?.debugRedact, true, `${method.output.typeName}.${field.name}`);
        }
      }
    }
  }
});
