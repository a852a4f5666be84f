/** Says that what is shown comes from the last compile that succeeded, not from the text on screen. */
export function StaleNote({ what }: { what: string }) {
  return (
    <p className="stale-note" data-testid="stale-note" role="status">
      Stale: {what} from the last successful compile. The text does not compile now; fix it to update.
    </p>
  );
}
