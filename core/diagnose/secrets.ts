/** What a hidden value reads as in a bundle. */
export const HIDDEN_SECRET = '(hidden)';

/** Names of flags and variables that carry credentials. */
const SECRET_NAME = /token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|auth|credential|private[-_]?key/i;
/** Values that are credentials by their form: OpenAI, Hugging Face, GitHub, Slack, AWS keys, JWTs. */
const SECRET_VALUE = /^(?:sk-|hf_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|eyJ)[A-Za-z0-9_\-.]{8,}$/;

/**
 * A command line as a bundle may carry it: the value of a flag or a VAR=value named like a credential
 * (`--token=…`, `--api-key …`, `HF_TOKEN=…`) and any word shaped like a known key hidden; everything else as typed.
 */
export function maskSecretWords(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const assigned = /^(-{0,2}[A-Za-z_][\w.-]*)=(.*)$/s.exec(word);
    if (assigned && SECRET_NAME.test(assigned[1]!)) {
      out.push(`${assigned[1]}=${HIDDEN_SECRET}`);
      continue;
    }
    if (/^--?[A-Za-z][\w.-]*$/.test(word) && SECRET_NAME.test(word)) {
      out.push(word);
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('-')) {
        out.push(HIDDEN_SECRET);
        i++;
      }
      continue;
    }
    out.push(SECRET_VALUE.test(word) ? HIDDEN_SECRET : word);
  }
  return out;
}

/** A command line read from /proc (words joined by spaces): only its program's name goes in a redacted bundle. */
export const programNameOnly = (command: string): string => `${(command.split(' ')[0] ?? '').split('/').pop() ?? ''} …`;
