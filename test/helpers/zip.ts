/** Writes real zip files for tests and benchmarks: deflated entries (Bun's zlib), local headers, central directory. */

/** One entry: its name and either its data (deflated here) or data deflated once and shared by many entries. */
export interface ZipEntry {
  name: string
  data?: Uint8Array
  deflated?: Deflated
}

/** An entry's data deflated once, with what its headers need. */
export interface Deflated {
  bytes: Uint8Array
  crc: number
  size: number
}

/** Deflates `data` for one or more entries. */
export function deflate(data: Uint8Array | string): Deflated {
  const raw = typeof data === 'string' ? new TextEncoder().encode(data) : data
  return { bytes: Bun.deflateSync(raw as Uint8Array<ArrayBuffer>, { level: 9 }), crc: Bun.hash.crc32(raw) >>> 0, size: raw.byteLength }
}

/** The bytes of a zip holding `entries` in order (no zip64: each entry and the whole under 4 GiB). */
export function zipBytes(entries: ZipEntry[]): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const e of entries) {
    const d = e.deflated ?? deflate(e.data ?? new Uint8Array())
    const name = new TextEncoder().encode(e.name)
    const local = new DataView(new ArrayBuffer(30))
    local.setUint32(0, 0x04034b50, true)
    local.setUint16(4, 20, true)
    local.setUint16(6, 0x0800, true) // names in UTF-8
    local.setUint16(8, 8, true) // deflate
    local.setUint16(12, 0x21, true) // 1980-01-01
    local.setUint32(14, d.crc, true)
    local.setUint32(18, d.bytes.byteLength, true)
    local.setUint32(22, d.size, true)
    local.setUint16(26, name.byteLength, true)
    const cd = new DataView(new ArrayBuffer(46))
    cd.setUint32(0, 0x02014b50, true)
    cd.setUint16(4, 20, true)
    cd.setUint16(6, 20, true)
    cd.setUint16(8, 0x0800, true)
    cd.setUint16(10, 8, true)
    cd.setUint16(14, 0x21, true)
    cd.setUint32(16, d.crc, true)
    cd.setUint32(20, d.bytes.byteLength, true)
    cd.setUint32(24, d.size, true)
    cd.setUint16(28, name.byteLength, true)
    cd.setUint32(42, offset, true)
    parts.push(new Uint8Array(local.buffer), name, d.bytes)
    central.push(new Uint8Array(cd.buffer), name)
    offset += 30 + name.byteLength + d.bytes.byteLength
  }
  const cdSize = central.reduce((n, p) => n + p.byteLength, 0)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, entries.length, true)
  end.setUint16(10, entries.length, true)
  end.setUint32(12, cdSize, true)
  end.setUint32(16, offset, true)
  return Buffer.concat([...parts, ...central, new Uint8Array(end.buffer)])
}
