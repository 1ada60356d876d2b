import { deflateSync } from 'fflate';

/**
 * Zip archives written byte by byte, for the forms fflate's `zipSync` does not write: ZIP64 extra
 * fields with an ordinary end record (as some CHARX writers do), a ZIP64 end record, data
 * descriptors, unknown methods, sizes that lie.
 */

export interface BuiltEntry {
  name: string;
  data: Uint8Array;
  /** 0 stored, 8 deflate (the default), or any other number, written as is. */
  method?: number;
  /** The compressed bytes to write instead of compressing `data`. */
  compressed?: Uint8Array;
  /** The size to declare instead of `data`'s length. */
  declaredSize?: number;
  /**
   * Fields saturated (0xFFFFFFFF) in the central directory, the real values in its ZIP64 extra field
   * (0x0001); `true` for all three. Saturated sizes are saturated in the local header too, with
   * both real sizes in its own ZIP64 extra field.
   */
  zip64Extra?: true | Zip64Field[];
  /** Flag bit 3: the local header has zero CRC and sizes; a data descriptor follows the data. */
  dataDescriptor?: boolean;
}

export type Zip64Field = 'size' | 'compressedSize' | 'offset';

export interface BuildOptions {
  /** A ZIP64 end record and locator, the end record's fields saturated. */
  zip64End?: boolean;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

class Writer {
  private parts: Uint8Array[] = [];
  length = 0;
  bytes(b: Uint8Array) {
    this.parts.push(b);
    this.length += b.length;
  }
  private number(n: number | bigint, size: 2 | 4 | 8) {
    const b = new Uint8Array(size);
    const v = new DataView(b.buffer);
    if (size === 2) v.setUint16(0, Number(n), true);
    else if (size === 4) v.setUint32(0, Number(n), true);
    else v.setBigUint64(0, BigInt(n), true);
    this.bytes(b);
  }
  u16 = (n: number) => this.number(n, 2);
  u32 = (n: number) => this.number(n, 4);
  u64 = (n: number) => this.number(n, 8);
  done(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) out.set(p, (at += p.length) - p.length);
    return out;
  }
}

const zip64Field = (...values: number[]): Uint8Array => {
  const w = new Writer();
  w.u16(0x0001);
  w.u16(values.length * 8);
  for (const v of values) w.u64(v);
  return w.done();
};

export function buildZip(entries: BuiltEntry[], options: BuildOptions = {}): Uint8Array<ArrayBuffer> {
  const w = new Writer();
  const central = new Writer();
  const utf8 = new TextEncoder();
  for (const entry of entries) {
    const method = entry.method ?? 8;
    const compressed = entry.compressed ?? (method === 8 ? deflateSync(entry.data) : entry.data);
    const size = entry.declaredSize ?? entry.data.length;
    const crc = crc32(entry.data);
    const name = utf8.encode(entry.name);
    const flags = 0x800 | (entry.dataDescriptor ? 0x8 : 0);
    const offset = w.length;
    const saturated = new Set<Zip64Field>(
      entry.zip64Extra === true ? ['size', 'compressedSize', 'offset'] : (entry.zip64Extra ?? []),
    );
    const sat = (field: Zip64Field) => saturated.has(field);
    const localSat = sat('size') || sat('compressedSize');
    const localExtra = localSat ? zip64Field(size, compressed.length) : new Uint8Array(0);
    w.u32(0x04034b50);
    w.u16(saturated.size ? 45 : 20);
    w.u16(flags);
    w.u16(method);
    w.u32(0); // time and date
    w.u32(entry.dataDescriptor ? 0 : crc);
    w.u32(entry.dataDescriptor ? 0 : localSat ? 0xffffffff : compressed.length);
    w.u32(entry.dataDescriptor ? 0 : localSat ? 0xffffffff : size);
    w.u16(name.length);
    w.u16(localExtra.length);
    w.bytes(name);
    w.bytes(localExtra);
    w.bytes(compressed);
    if (entry.dataDescriptor) {
      w.u32(0x08074b50);
      w.u32(crc);
      w.u32(compressed.length);
      w.u32(size);
    }
    const centralExtra = saturated.size
      ? zip64Field(
          ...(sat('size') ? [size] : []),
          ...(sat('compressedSize') ? [compressed.length] : []),
          ...(sat('offset') ? [offset] : []),
        )
      : new Uint8Array(0);
    central.u32(0x02014b50);
    central.u16((3 << 8) | 45); // made on Unix
    central.u16(saturated.size ? 45 : 20);
    central.u16(flags);
    central.u16(method);
    central.u32(0);
    central.u32(crc);
    central.u32(sat('compressedSize') ? 0xffffffff : compressed.length);
    central.u32(sat('size') ? 0xffffffff : size);
    central.u16(name.length);
    central.u16(centralExtra.length);
    central.u16(0); // comment
    central.u16(0); // disk
    central.u16(0); // internal attributes
    central.u32((0o100644 << 16) >>> 0);
    central.u32(sat('offset') ? 0xffffffff : offset);
    central.bytes(name);
    central.bytes(centralExtra);
  }
  const directoryOffset = w.length;
  const directory = central.done();
  w.bytes(directory);
  if (options.zip64End) {
    const record = w.length;
    w.u32(0x06064b50);
    w.u64(44);
    w.u16(45);
    w.u16(45);
    w.u32(0);
    w.u32(0);
    w.u64(entries.length);
    w.u64(entries.length);
    w.u64(directory.length);
    w.u64(directoryOffset);
    w.u32(0x07064b50);
    w.u32(0);
    w.u64(record);
    w.u32(1);
  }
  const z = options.zip64End;
  w.u32(0x06054b50);
  w.u16(0);
  w.u16(0);
  w.u16(z ? 0xffff : entries.length);
  w.u16(z ? 0xffff : entries.length);
  w.u32(z ? 0xffffffff : directory.length);
  w.u32(z ? 0xffffffff : directoryOffset);
  w.u16(0);
  return w.done();
}
