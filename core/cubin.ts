/**
 * Kernel entry points in a CUDA cubin (an ELF file): each __global__ function has a section named
 * `.text.<symbol>` with its (mangled) symbol. Enough to find the lowered name of a kernel when the
 * compiler (nvcc) does not report it, without needing cuobjdump.
 */
export function cubinKernelSymbols(image: Uint8Array): string[] {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  if (image.byteLength < 64 || view.getUint32(0) !== 0x7f454c46) throw new Error('not an ELF image');
  if (image[4] !== 2) throw new Error('not a 64-bit ELF image');
  const le = image[5] === 1;
  const shoff = Number(view.getBigUint64(0x28, le));
  const shentsize = view.getUint16(0x3a, le);
  const shnum = view.getUint16(0x3c, le);
  const shstrndx = view.getUint16(0x3e, le);
  if (shoff + shnum * shentsize > image.byteLength || shstrndx >= shnum) throw new Error('truncated ELF image');
  const section = (i: number) => {
    const base = shoff + i * shentsize;
    return { name: view.getUint32(base, le), offset: Number(view.getBigUint64(base + 0x18, le)), size: Number(view.getBigUint64(base + 0x20, le)) };
  };
  const strtab = section(shstrndx);
  const readName = (offset: number): string => {
    let end = strtab.offset + offset;
    while (end < image.byteLength && image[end] !== 0) end++;
    return String.fromCharCode(...image.subarray(strtab.offset + offset, end)); // ELF names are ASCII
  };
  const symbols: string[] = [];
  for (let i = 0; i < shnum; i++) {
    const name = readName(section(i).name);
    if (name.startsWith('.text.')) symbols.push(name.slice('.text.'.length));
  }
  return symbols;
}

/**
 * Picks the symbol for a kernel written as `name` in the source: an exact (extern "C") match, else an
 * Itanium-mangled free function `_Z<len><name>...`, else one in a namespace `_ZN...<len><name>E...`.
 */
export function findKernelSymbol(symbols: string[], name: string): string | null {
  if (symbols.includes(name)) return name;
  const plain = `_Z${name.length}${name}`;
  const free = symbols.filter((s) => s.startsWith(plain) && !/^\d/.test(s.slice(plain.length)));
  if (free.length >= 1) return free[0]!;
  const nested = symbols.find((s) => s.startsWith('_ZN') && s.includes(`${name.length}${name}E`));
  return nested ?? null;
}

/** Kernel entry names in PTX text (`.entry name(` / `.visible .entry name(`), for PTX-only images. */
export function ptxEntryNames(ptx: string): string[] {
  return [...ptx.matchAll(/\.entry\s+([A-Za-z_$][\w$]*)\s*\(/g)].map((m) => m[1]!);
}
