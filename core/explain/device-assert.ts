import { plural } from '../format'; /** One failed device-side assert, as CUDA's assert() prints it, with every thread that printed it. */
export interface DeviceAssert {
  file: string;
  line: number;
  /** The kernel's name: "indexSelectSmallIndex", or "operator()" for a lambda (older PyTorch printed the whole signature). */
  kernel: string;
  condition: string;
  /** Threads that printed this assertion (CUDA's printf buffer can drop some). */
  failedThreads: number;
  blocks: number;
  firstBlock: string;
  firstThread: string;
  /** The PyTorch operation this kernel belongs to, where it is a well-known one. */
  operation: string | null;
  likelyCause: string | null;
}

// /pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], thread: [45,0,0] Assertion `srcIndex < srcSelectDimSize` failed.
const ASSERT_LINE = /^(.+?):(\d+): (.*?): block: \[(\d+,\d+,\d+)\], thread: \[(\d+,\d+,\d+)\] Assertion `(.+)` failed\.?\s*$/gm;

interface KnownAssert {
  matches: (a: { file: string; kernel: string; condition: string }) => boolean;
  operation: string;
  cause: string;
}

const KNOWN_ASSERTS: KnownAssert[] = [
  {
    matches: (a) => /indexSelect(?:Small|Large)Index/.test(a.kernel) || /srcIndex < srcSelectDimSize/.test(a.condition),
    operation: 'embedding / index_select',
    cause:
      'An index is out of range for the tensor it selects from: in nn.Embedding / F.embedding a token id ≥ num_embeddings (or negative) — typically a tokenizer with more tokens than the embedding table, or special tokens added without resizing the embeddings; in index_select an index ≥ the size of that dimension. Check ids.min() >= 0 and ids.max() < embedding.num_embeddings before the call.',
  },
  {
    matches: (a) => /< n_classes/.test(a.condition),
    operation: 'cross_entropy / nll_loss',
    cause:
      'A class label (target) is negative or ≥ the number of classes, the size of the logits along dim 1: labels numbered 1..C instead of 0..C−1, a model head with fewer outputs than the data has classes, or a padding label such as -1 while ignore_index is the default -100. Check target.max() < logits.shape[1] and that the only negative label is ignore_index.',
  },
  {
    matches: (a) => /ScatterGather/.test(a.file) || /scatter gather kernel index out of bounds/.test(a.condition),
    operation: 'gather / scatter',
    cause:
      'An index given to gather, scatter, scatter_add / scatter_reduce or take_along_dim is negative or ≥ the size of the dimension it indexes (of the input for gather, of self for scatter). Check index.min() >= 0 and index.max() < input.size(dim).',
  },
  {
    matches: (a) => /IndexKernel/.test(a.file) || /"index out of bounds"/.test(a.condition),
    operation: 'indexing',
    cause: 'An index in advanced indexing (t[idx], index_put_, index_add_, index_copy_) is out of range for the dimension it indexes.',
  },
  {
    matches: (a) => /input_val >= zero && input_val <= one/.test(a.condition),
    operation: 'binary_cross_entropy',
    cause:
      'binary_cross_entropy got an input outside [0, 1] (or NaN): pass probabilities after a sigmoid, or use binary_cross_entropy_with_logits / BCEWithLogitsLoss on the raw logits.',
  },
];

/** "void indexSelectLargeIndex(cuda::detail::TensorInfo<T, IndexType>, ...) [with T = float, ...]" -> "indexSelectLargeIndex". */
function kernelName(printed: string): string {
  const call = /([A-Za-z_]\w*)\s*\(/.exec(printed);
  return printed.startsWith('operator') || !call ? printed : call[1]!;
}

/** The assertions printed to stderr before PyTorch's traceback, one entry per distinct assert. */
export function parseDeviceAsserts(text: string): DeviceAssert[] {
  const groups = new Map<string, { first: RegExpMatchArray; threads: number; blocks: Set<string> }>();
  for (const m of text.matchAll(ASSERT_LINE)) {
    const key = `${m[1]}:${m[2]}:${m[3]}:${m[6]}`;
    const group = groups.get(key) ?? { first: m, threads: 0, blocks: new Set<string>() };
    group.threads++;
    group.blocks.add(m[4]!);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ first, threads, blocks }) => {
    const site = { file: first[1]!.trim(), kernel: kernelName(first[3]!.trim()), condition: first[6]! };
    const known = KNOWN_ASSERTS.find((k) => k.matches(site));
    return {
      ...site,
      line: Number(first[2]),
      failedThreads: threads,
      blocks: blocks.size,
      firstBlock: first[4]!,
      firstThread: first[5]!,
      operation: known?.operation ?? null,
      likelyCause: known?.cause ?? null,
    };
  });
}

const baseName = (path: string) => path.split(/[\\/]/).pop() ?? path;

function assertLine(a: DeviceAssert): string {
  const op = a.operation ? ` (${a.operation})` : '';
  return `${baseName(a.file)}:${a.line}, kernel ${a.kernel}${op}: \`${a.condition}\` failed in ${plural(a.failedThreads, 'thread')} of ${plural(a.blocks, 'block')}, first block [${a.firstBlock}], thread [${a.firstThread}].`;
}

const USUAL_CAUSES =
  "No assertion lines are in the paste (they are printed to the process's stderr before the traceback; under Jupyter they go to the server's console). The usual causes in PyTorch are an index out of range: embedding indices ≥ num_embeddings, class labels ≥ the number of classes (or negative, other than ignore_index) in cross_entropy / nll_loss, gather / scatter / index_select indices outside the dimension.";

const DSA_AND_CPU =
  "PyTorch's hint to compile with TORCH_USE_CUDA_DSA helps only with a PyTorch built from source with that flag; setting it as an environment variable on a released wheel does nothing. Quicker: run the same step on the CPU, where the same bad index raises an ordinary Python exception at the right line.";

/** What the assertions say, one sentence each, then the operation's likely cause and how to confirm it. */
export function assertSpecifics(asserts: DeviceAssert[]): string[] {
  if (asserts.length === 0) return [USUAL_CAUSES, DSA_AND_CPU];
  const causes = [...new Set(asserts.map((a) => a.likelyCause).filter((c): c is string => c !== null))];
  return [...asserts.slice(0, 5).map(assertLine), ...causes, DSA_AND_CPU];
}
