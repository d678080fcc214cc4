/**
 * The gRPC rich error model: `grpc-status-details-bin` carries a `google.rpc.Status` whose
 * details hold a `google.rpc.ErrorInfo` with `reason` = our error code (API.md section 4).
 * Encoded by hand with the protobuf wire writer: three tiny messages do not justify
 * generating the whole google.rpc package.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

export const ERROR_DOMAIN = 'forecast.v1';
const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

/** Encode google.rpc.Status{code, message, details: [Any(ErrorInfo{reason, domain, metadata})]}. */
export function encodeStatusDetails(code: number, message: string, reason: string, metadata: Record<string, string>): Buffer {
  const info = new BinaryWriter();
  info.tag(1, WireType.LengthDelimited).string(reason);
  info.tag(2, WireType.LengthDelimited).string(ERROR_DOMAIN);
  for (const [k, v] of Object.entries(metadata)) {
    info.tag(3, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(k).tag(2, WireType.LengthDelimited).string(v).join();
  }
  const any = new BinaryWriter();
  any.tag(1, WireType.LengthDelimited).string(ERROR_INFO_TYPE);
  any.tag(2, WireType.LengthDelimited).bytes(info.finish());
  const status = new BinaryWriter();
  status.tag(1, WireType.Varint).int32(code);
  status.tag(2, WireType.LengthDelimited).string(message);
  status.tag(3, WireType.LengthDelimited).bytes(any.finish());
  return Buffer.from(status.finish());
}

/** Decode the ErrorInfo of a `grpc-status-details-bin` value (for clients and tests). */
export function decodeErrorInfo(bytes: Uint8Array): { code: number; message: string; reason?: string; domain?: string; metadata: Record<string, string> } {
  const out = { code: 0, message: '', reason: undefined as string | undefined, domain: undefined as string | undefined, metadata: {} as Record<string, string> };
  const status = new BinaryReader(bytes);
  while (status.pos < status.len) {
    const [field, wire] = status.tag();
    if (field === 1) out.code = status.int32();
    else if (field === 2) out.message = status.string();
    else if (field === 3) {
      const any = new BinaryReader(status.bytes());
      let type = '';
      let value: Uint8Array | undefined;
      while (any.pos < any.len) {
        const [f, w] = any.tag();
        if (f === 1) type = any.string();
        else if (f === 2) value = any.bytes();
        else any.skip(w);
      }
      if (type === ERROR_INFO_TYPE && value) {
        const info = new BinaryReader(value);
        while (info.pos < info.len) {
          const [f, w] = info.tag();
          if (f === 1) out.reason = info.string();
          else if (f === 2) out.domain = info.string();
          else if (f === 3) {
            const entry = new BinaryReader(info.bytes());
            let k = '';
            let v = '';
            while (entry.pos < entry.len) {
              const [ef, ew] = entry.tag();
              if (ef === 1) k = entry.string();
              else if (ef === 2) v = entry.string();
              else entry.skip(ew);
            }
            out.metadata[k] = v;
          } else info.skip(w);
        }
      }
    } else status.skip(wire);
  }
  return out;
}
