import { splitInlineCode } from '../../core/text/inline-code';

/** A message as prose, with its `code` spans shown as code rather than between backticks. */
export function Prose({ text }: { text: string }) {
  return (
    <>
      {splitInlineCode(text).map((segment, i) =>
        segment.kind === 'code' ? (
          <code key={i} className="inline-code">
            {segment.text}
          </code>
        ) : (
          <span key={i}>{segment.text}</span>
        ),
      )}
    </>
  );
}
