/**
 * Joins the generated service definitions, our endpoints and the descriptor image into the
 * method table both transports serve. Start-up fails if an RPC in the image has no endpoint,
 * so a proto method can never be left unimplemented by accident.
 */
import { getOption, hasOption, type DescMethod, type DescService, type Registry } from '@bufbuild/protobuf';
import type { MethodEntry, ServiceDefinition, ServiceImpl } from './method';
import { deprecationOf, DEPRECATIONS, type DeprecationNotice } from './deprecations';

/** A service to serve: its generated definition and our implementation. */
export interface ServiceBinding {
  readonly definition: ServiceDefinition;
  readonly impl: ServiceImpl<ServiceDefinition>;
}

/** Bind `impl` to `definition` with type checking at the call site. */
export function bindService<S extends ServiceDefinition>(definition: S, impl: ServiceImpl<S>): ServiceBinding {
  return { definition, impl: impl as unknown as ServiceImpl<ServiceDefinition> };
}

/** Build the method table, keyed by gRPC path. */
export function buildMethodTable(
  bindings: readonly ServiceBinding[],
  descriptors: Registry,
  deprecations: Readonly<Record<string, DeprecationNotice>> = DEPRECATIONS,
): Map<string, MethodEntry> {
  const table = new Map<string, MethodEntry>();
  for (const { definition, impl } of bindings) {
    let service: DescService | undefined;
    for (const [key, def] of Object.entries(definition)) {
      const [, serviceName, methodName] = /^\/([^/]+)\/([^/]+)$/.exec(def.path) ?? [];
      service ??= descriptors.getService(serviceName);
      if (!service) throw new Error(`service ${serviceName} is not in the descriptor image (run make generate)`);
      const desc = service.methods.find((m) => m.name === methodName);
      if (!desc) throw new Error(`${def.path} is not in the descriptor image (run make generate)`);
      const endpoint = impl[key];
      if (!endpoint) throw new Error(`${def.path} has no endpoint`);
      table.set(def.path, {
        path: def.path,
        service: serviceName,
        name: methodName,
        key,
        definition: def,
        endpoint,
        readOnly: isGet(desc, descriptors),
        deprecation: desc.deprecated ? deprecationOf(`${serviceName}.${methodName}`, deprecations) : undefined,
        deprecatedFields: desc.input.fields
          .filter((f) => f.deprecated)
          .map((f) => ({ localName: f.localName, deprecation: deprecationOf(`${desc.input.typeName}.${f.name}`, deprecations) })),
      });
    }
    if (service) {
      for (const m of service.methods) {
        const path = `/${service.typeName}/${m.name}`;
        if (!table.has(path)) throw new Error(`${path} is in the contract but has no endpoint`);
      }
    }
  }
  return table;
}

/** Whether the method's `google.api.http` rule is a GET (a read: no side effects). */
function isGet(method: DescMethod, registry: Registry): boolean {
  const ext = registry.getExtension('google.api.http');
  if (!ext || !hasOption(method, ext)) return false;
  const rule = getOption(method, ext) as unknown as { pattern?: { case?: string } };
  return rule.pattern?.case === 'get';
}
