/**
 * A file name as one word of a command line: a relative name gets ./ before it, so that a name beginning with -
 * (--run.cu, -odir.cu) names the file instead of being read as an option.
 */
export const fileArgument = (name: string): string => (name.startsWith('/') || name.startsWith('./') || name.startsWith('../') ? name : `./${name}`);

/**
 * A program's argv as given, except a program beginning with - is the file of that name in the working folder:
 * compute-sanitizer would take it for one of its options, and so would `exec` in a /bin/sh that is bash. A name
 * without - keeps its PATH lookup.
 */
export const programArgv = (argv: readonly string[]): string[] => argv.map((word, i) => (i === 0 && word.startsWith('-') ? fileArgument(word) : word));
